import fc from 'fast-check';
import { scanJsonLayout } from './scan-json-layout';

const scan = (text: string, depthCap = 512) => scanJsonLayout(Buffer.from(text, 'utf8'), depthCap);

/** Nesting of a parsed value as the scanner counts it: an object or array is one level more than its children. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** Python's json.dumps defaults: spaces after `,` and `:`, non-ASCII as \u escapes. */
function pythonStyle(value: unknown): string {
  return JSON.stringify(value, null, 1)
    .replace(/\n\s*/g, ' ')
    .replace(
      /[\u0080-\uffff]/g,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

describe('scanJsonLayout', () => {
  it('when a batch body is compact, then each item is measured as sent and the depth counted', () => {
    const items = [{ type: 'track', event: 'Ü', properties: { a: [1, 2] } }, 'x', 12, null];
    const body = JSON.stringify({ writeKey: 'k', batch: items });
    // body, batch, item, properties, a: five levels.
    expect(scan(body)).toEqual({
      maxDepth: 5,
      batchItems: {
        byteLengths: items.map((item) => Buffer.byteLength(JSON.stringify(item))),
        hasExponent: [false, false, false, false],
      },
    });
  });

  it('when items are surrounded by whitespace, then the whitespace is not counted', () => {
    const body = '{ "batch" : [\n  {"a": 1} ,\t"b"\r\n , [ ]\n ] }';
    expect(scan(body).batchItems?.byteLengths).toEqual([8, 3, 3]);
  });

  it('when the batch is empty or holds only whitespace, then it has no items', () => {
    expect(scan('{"batch":[]}').batchItems).toEqual({ byteLengths: [], hasExponent: [] });
    expect(scan('{"batch":[ \n ]}').batchItems).toEqual({ byteLengths: [], hasExponent: [] });
  });

  it('when "batch" appears twice, then the last one counts, as in JSON.parse', () => {
    const body = '{"batch":[1,2,3],"context":{"batch":[4]},"batch":[{"x":"]"}]}';
    expect(JSON.parse(body).batch).toHaveLength(1);
    expect(scan(body).batchItems?.byteLengths).toEqual([9]);
  });

  it('when the key is written with escapes, then it is still the batch key', () => {
    expect(scan('{"b\\u0061tch":["ab"]}').batchItems?.byteLengths).toEqual([4]);
    expect(scan('{"batch\\"":["ab"]}').batchItems).toBeNull();
  });

  it('when "batch" is nested, not an array, or the body is an array, then there is no batch', () => {
    expect(scan('{"context":{"batch":[1]}}').batchItems).toBeNull();
    expect(scan('{"batch":{"0":[1]}}').batchItems).toBeNull();
    expect(scan('["batch",[1]]').batchItems).toBeNull();
  });

  it('when strings hold brackets, commas, quotes and backslashes, then they do not confuse the scan', () => {
    const items = ['[,]{}', 'say \\"hi\\"', 'ends with \\\\', '\\u005b'];
    const body = `{"batch":[${items.map((item) => `"${item}"`).join(',')}]}`;
    expect(JSON.parse(body).batch).toHaveLength(4);
    expect(scan(body)).toEqual({
      maxDepth: 2,
      batchItems: {
        byteLengths: items.map((item) => item.length + 2),
        hasExponent: [false, false, false, false],
      },
    });
  });

  it('when an item holds a number with an exponent, then it is flagged; true and false are not', () => {
    const layout = scan('{"batch":[{"a":1e5},{"a":true,"b":false,"c":"1e5"},[2E-3],3.5]}');
    expect(layout.batchItems?.hasExponent).toEqual([true, false, true, false]);
  });

  it('when the nesting passes the cap, then the scan stops and reports the depth past it', () => {
    const deep = '{"batch":[' + '['.repeat(20) + ']'.repeat(20) + ']}';
    expect(scan(deep, 10)).toEqual({ maxDepth: 11, batchItems: null });
    expect(scan(deep, 22).maxDepth).toBe(22);
  });

  it('for any JSON items written compact or the way Python writes them, sizes and depth are exact', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 8 }),
        fc.boolean(),
        (items, python) => {
          const write = python ? pythonStyle : (value: unknown) => JSON.stringify(value);
          const body = `{"writeKey": "k", "batch": [${items.map(write).join(python ? ', ' : ',')}]}`;
          const layout = scan(body);
          expect(layout.maxDepth).toBe(depthOf(JSON.parse(body)));
          expect(layout.batchItems?.byteLengths).toEqual(items.map((item) => Buffer.byteLength(write(item))));
        },
      ),
      { seed: 20261126, numRuns: 300 },
    );
  });

  it('for any item without an exponent, the compact re-serialisation is no longer than the item as sent', () => {
    const numberLiteral = fc
      .tuple(fc.boolean(), fc.nat(), fc.option(fc.stringMatching(/^[0-9]{1,25}$/)))
      .map(
        ([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`,
      );
    const bigInteger = fc.stringMatching(/^[1-9][0-9]{0,30}$/);
    const token = fc.oneof(
      numberLiteral,
      bigInteger,
      fc.constantFrom('"\\u00e9"', '"\\/"', 'true', 'null', '-0'),
    );
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 6 }), (tokens) => {
        const item = `[${tokens.join(' , ')}]`;
        const layout = scan(`{"batch":[${item}]}`);
        expect(layout.batchItems?.hasExponent).toEqual([false]);
        const compact = Buffer.byteLength(JSON.stringify(JSON.parse(item)));
        expect(compact).toBeLessThanOrEqual(layout.batchItems!.byteLengths[0]);
      }),
      { seed: 20261126, numRuns: 500 },
    );
  });
});
