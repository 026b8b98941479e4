import suite from './replay.js';
const r = await suite.run({ quick: process.argv[2] === 'quick', log: (m) => console.error(m) });
console.log(r.markdown);
