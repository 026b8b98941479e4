import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, TidewaterError } from '../../../src/core/errors.js';
import { defineEnvironment, defineOptions, describe as describeValue } from '../../../src/core/options.js';

interface WidgetOptions {
  name: string;
  size?: number;
  ratio?: number;
  label?: string;
  loud?: boolean;
  onDone?: () => void;
  mode?: 'fast' | 'slow';
  client?: { send(command: unknown): unknown };
  sink?: { write(line: string): unknown };
  even?: number;
}

const readWidget = defineOptions<WidgetOptions>()('Widget', {
  name: { kind: 'nonEmptyString', required: true },
  size: { kind: 'integer', min: 1, max: 20, default: 4 },
  ratio: { kind: 'number', min: 0 },
  label: { kind: 'string', default: '' },
  loud: { kind: 'boolean', default: false },
  onDone: { kind: 'function' },
  mode: { kind: 'enum', values: ['fast', 'slow'], default: 'fast' },
  client: { kind: 'client' },
  sink: { kind: 'object', methods: ['write'] },
  even: {
    kind: 'custom',
    expected: 'an even integer',
    check: (v) => Number.isInteger(v) && (v as number) % 2 === 0,
  },
});

const KNOWN = 'name, size, ratio, label, loud, onDone, mode, client, sink, even';

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error).toBeInstanceOf(TidewaterError);
    return (error as Error).message;
  }
  throw new Error('expected the reader to throw');
}

describe('defineOptions', () => {
  it('returns every declared key, with defaults applied to what is absent', () => {
    const onDone = () => undefined;
    expect(readWidget({ name: 'w', onDone })).toEqual({
      name: 'w',
      size: 4,
      ratio: undefined,
      label: '',
      loud: false,
      onDone,
      mode: 'fast',
      client: undefined,
      sink: undefined,
      even: undefined,
    });
    expect(readWidget({ name: 'w', size: 20, mode: 'slow', even: 2, ratio: 0.5 })).toMatchObject({
      size: 20,
      mode: 'slow',
      even: 2,
      ratio: 0.5,
    });
  });

  it('treats an option given as undefined as absent', () => {
    expect(readWidget({ name: 'w', size: undefined }).size).toBe(4);
  });

  it('answers absent options with one frozen object of the defaults when nothing is required', () => {
    const read = defineOptions<{ size?: number }>()('Small', { size: { kind: 'integer', default: 3 } });
    const first = read(undefined);
    expect(first).toEqual({ size: 3 });
    expect(read(undefined)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('names an unknown key and lists the known ones', () => {
    expect(messageOf(() => readWidget({ name: 'w', sise: 3 }))).toBe(
      `Widget: unknown option 'sise' (known: ${KNOWN})`,
    );
  });

  it('says what a required option is missing, with why when the spec says', () => {
    expect(messageOf(() => readWidget({}))).toBe("Widget: option 'name' is required");
    expect(messageOf(() => readWidget(undefined))).toBe("Widget: option 'name' is required");
    const read = defineOptions<{ read: () => void }>()('Kit', {
      read: { kind: 'function', required: true, why: 'without it nothing is checked' },
    });
    expect(messageOf(() => read({}))).toBe("Kit: option 'read' is required: without it nothing is checked");
  });

  it.each([
    [{ name: '' }, 'option \'name\' must be a non-empty string, got the string ""'],
    [{ name: 'w', size: 0 }, "option 'size' must be an integer in [1, 20], got number 0"],
    [{ name: 'w', size: 2.5 }, "option 'size' must be an integer in [1, 20], got number 2.5"],
    [{ name: 'w', ratio: -1 }, "option 'ratio' must be a finite number in [0, ∞), got number -1"],
    [{ name: 'w', ratio: Number.NaN }, "option 'ratio' must be a finite number in [0, ∞), got number NaN"],
    [{ name: 'w', label: 3 }, "option 'label' must be a string, got number 3"],
    [{ name: 'w', loud: 'yes' }, 'option \'loud\' must be a boolean, got the string "yes"'],
    [{ name: 'w', onDone: {} }, "option 'onDone' must be a function, got an Object"],
    [{ name: 'w', mode: 'medium' }, "option 'mode' must be one of 'fast', 'slow', got the string \"medium\""],
    [{ name: 'w', client: {} }, "option 'client' must be an AWS SDK v3 client (with send()), got an Object"],
    [{ name: 'w', sink: null }, "option 'sink' must be an object with write(), got null"],
    [{ name: 'w', even: 3 }, "option 'even' must be an even integer, got number 3"],
  ])('refuses %o in the one message shape', (input, detail) => {
    expect(messageOf(() => readWidget(input))).toBe(`Widget: ${detail}`);
  });

  it('refuses options that are not an object', () => {
    for (const input of [null, 'w', 3, ['name']]) {
      expect(messageOf(() => readWidget(input))).toMatch(/^Widget: options must be an object, got /);
    }
  });

  it('accepts class instances for object and client rules (duck-typed, never instanceof)', () => {
    class Writer {
      write(): void {}
    }
    class Client {
      send(): void {}
    }
    const o = readWidget({ name: 'w', sink: new Writer(), client: new Client() });
    expect(o.sink).toBeInstanceOf(Writer);
    expect(o.client).toBeInstanceOf(Client);
  });

  it('places a nested object in its parent: where and a key prefix', () => {
    const readRetry = defineOptions<{ attempts?: number }>()('retry', {
      attempts: { kind: 'integer', min: 1 },
    });
    expect(messageOf(() => readRetry({ attempts: 0 }, 'pipeline', 'retry.'))).toBe(
      "pipeline: option 'retry.attempts' must be an integer in [1, ∞), got number 0",
    );
    expect(messageOf(() => readRetry({ atempts: 2 }, 'pipeline', 'retry.'))).toBe(
      "pipeline: unknown option 'retry.atempts' (known: attempts)",
    );
    expect(messageOf(() => readRetry(5, 'pipeline', 'retry.'))).toBe(
      "pipeline: option 'retry' must be an object, got number 5",
    );
  });

  it('names the offending key on the error, and builds cross-key errors in the same shape', () => {
    let caught: unknown;
    try {
      readWidget({ name: 'w', size: 99 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: 'InvalidOptionsError', option: 'size' });
    const error = readWidget.fail("give 'size' or 'ratio', not both", 'size');
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error.message).toBe("Widget: give 'size' or 'ratio', not both");
    expect(error.option).toBe('size');
  });

  it('throws a module subclass when the module gives an error factory', () => {
    class WidgetOptionsError extends InvalidOptionsError {
      override name = 'WidgetOptionsError';
    }
    const read = defineOptions<{ size?: number }>({
      error: (message, option) => new WidgetOptionsError(message, { option }),
    })('Widget', { size: { kind: 'integer' } });
    expect(() => read({ size: 'big' })).toThrow(WidgetOptionsError);
    expect(() => read({ colour: 1 })).toThrow(expect.objectContaining({ option: 'colour' }));
  });

  it('refuses every key the spec does not declare, naming it', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((k) => !KNOWN.split(', ').includes(k) && k !== '__proto__'),
        fc.anything(),
        (key, value) => {
          const input: Record<string, unknown> = { name: 'w' };
          input[key] = value;
          expect(() => readWidget(input)).toThrow(expect.objectContaining({ option: key }));
        },
      ),
    );
  });

  it('accepts exactly the integers in an integer rule range', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -50, max: 50 }), fc.double(), fc.string(), fc.boolean()),
        (size) => {
          const valid = Number.isInteger(size) && (size as number) >= 1 && (size as number) <= 20;
          if (valid) expect(readWidget({ name: 'w', size }).size).toBe(size);
          else expect(() => readWidget({ name: 'w', size })).toThrow(InvalidOptionsError);
        },
      ),
    );
  });
});

describe('defineEnvironment', () => {
  const readEnv = defineEnvironment<{
    BUCKET: string;
    SECONDS?: number;
    MODE?: 'a' | 'b';
    PREFIX?: string;
  }>()('handler', {
    BUCKET: { kind: 'nonEmptyString', required: true },
    SECONDS: { kind: 'integer', min: 1 },
    MODE: { kind: 'enum', values: ['a', 'b'], default: 'a' },
    PREFIX: {
      kind: 'custom',
      expected: 'a prefix ending in /',
      check: (v) => /^\S+\/$/.test(String(v)),
      default: 'x/',
    },
  });

  it('reads the declared variables, trimmed, numbers as numbers, and ignores the rest', () => {
    expect(readEnv({ BUCKET: ' b ', SECONDS: ' 30 ', MODE: 'b', PATH: '/usr/bin' })).toEqual({
      BUCKET: 'b',
      SECONDS: 30,
      MODE: 'b',
      PREFIX: 'x/',
    });
  });

  it('treats empty text as unset, except where a custom rule judges the text itself', () => {
    expect(readEnv({ BUCKET: 'b', MODE: '', SECONDS: '  ' })).toMatchObject({
      MODE: 'a',
      SECONDS: undefined,
    });
    expect(messageOf(() => readEnv({ BUCKET: 'b', PREFIX: '' }))).toBe(
      'handler: environment variable \'PREFIX\' must be a prefix ending in /, got the string ""',
    );
    expect(messageOf(() => readEnv({ BUCKET: 'b', PREFIX: ' x/' }))).toMatch(/PREFIX/);
  });

  it('names the variable in the one message shape', () => {
    expect(messageOf(() => readEnv({ BUCKET: '' }))).toBe(
      "handler: environment variable 'BUCKET' is required",
    );
    expect(messageOf(() => readEnv({ BUCKET: 'b', SECONDS: 'ten' }))).toBe(
      'handler: environment variable \'SECONDS\' must be an integer in [1, ∞), got the string "ten"',
    );
    expect(messageOf(() => readEnv({ BUCKET: 'b', SECONDS: '1.5' }))).toBe(
      "handler: environment variable 'SECONDS' must be an integer in [1, ∞), got number 1.5",
    );
    expect(() => readEnv({ BUCKET: 'b', MODE: 'c' })).toThrow(expect.objectContaining({ option: 'MODE' }));
  });
});

describe('describe', () => {
  it('shows a value the way every message quotes it', () => {
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('undefined undefined');
    expect(describeValue([1])).toBe('an array');
    expect(describeValue(new Uint8Array(1))).toBe('a Uint8Array');
    expect(describeValue(new Date(0))).toBe('a Date');
    expect(describeValue(Object.create(null))).toBe('an object');
    expect(describeValue('x'.repeat(50))).toBe(`the string "${'x'.repeat(40)}…"`);
    expect(describeValue(3n)).toBe('bigint 3');
  });
});
