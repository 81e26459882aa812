/**
 * A tolerant JSON reader for rule sets. AWS prints its FlexMatch examples with
 * `//` and `/* *\/` comments and the odd trailing comma, and studios paste
 * them as printed; this reads them without a dependency. A key given twice in
 * one object keeps its last value, as JSON.parse does (AWS's large-match
 * example lists `target` and `steps` twice in one expansion).
 */
import { InvalidInputError } from '../../core/errors.js';

export function parseTolerantJson(text: string): unknown {
  let i = 0;
  const fail = (message: string): never => {
    const before = text.slice(0, i);
    const line = before.split('\n').length;
    const column = i - before.lastIndexOf('\n');
    throw new InvalidInputError(`${message} at line ${line}, column ${column}`, { field: 'rule set' });
  };
  const skip = (): void => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff) i++;
      else if (c === 47 && text[i + 1] === '/') {
        while (i < text.length && text[i] !== '\n') i++;
      } else if (c === 47 && text[i + 1] === '*') {
        const end = text.indexOf('*/', i + 2);
        if (end < 0) fail('unclosed comment');
        i = end + 2;
      } else return;
    }
  };
  const value = (): unknown => {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      skip();
      while (text[i] !== '}') {
        skip();
        if (text[i] !== '"') fail('expected a quoted key');
        const key = string();
        skip();
        if (text[i] !== ':') fail(`expected ':' after key ${JSON.stringify(key)}`);
        i++;
        Object.defineProperty(out, key, { value: value(), enumerable: true, writable: true, configurable: true });
        skip();
        if (text[i] === ',') {
          i++;
          skip();
        } else if (text[i] !== '}') fail("expected ',' or '}'");
      }
      i++;
      return out;
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      skip();
      while (text[i] !== ']') {
        out.push(value());
        skip();
        if (text[i] === ',') {
          i++;
          skip();
        } else if (text[i] !== ']') fail("expected ',' or ']'");
      }
      i++;
      return out;
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (!literal) return fail(i >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(c)}`);
    i += literal[0].length;
    return JSON.parse(literal[0]);
  };
  const string = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text[i] === '\n') fail('unterminated string');
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('bad escape in string');
    }
  };
  const result = value();
  skip();
  if (i < text.length) fail('unexpected text after the rule set');
  return result;
}
