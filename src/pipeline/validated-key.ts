// The key validated() keeps its stage under, on its own so the config vocabulary can name it in a
// type (a bare schema given as `item` is then a type error) without importing the stage.
// Symbol.for: a schema wrapped by another copy of tidewater (a bundled handler) is still recognized.
export const VALIDATED: unique symbol = Symbol.for('tidewater.validated');
