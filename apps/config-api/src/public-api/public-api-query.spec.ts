import { PublicApiError } from './public-api.error';
import { paginatePublic, queryObjects, readPublicQuery } from './public-api-query';
import { publicRulesOf, v1betaRulesOf } from './public-tracking-plan.rules';

describe('readPublicQuery', () => {
  it('reads literal, percent-encoded and dotted brackets as one key', () => {
    for (const query of [
      '?pagination[count]=2&pagination[cursor]=MA%3D%3D',
      '?pagination%5Bcount%5D=2&pagination%5Bcursor%5D=MA%3D%3D',
      '?pagination.count=2&pagination.cursor=MA==',
    ]) {
      const read = readPublicQuery(`/public-api/sources${query}`);
      expect([read.get('pagination.count'), read.get('pagination.cursor')]).toEqual([['2'], ['MA==']]);
    }
  });

  it('reads arrays as x.0, x[0], x[] and objects in arrays as x[0][field]', () => {
    const read = readPublicQuery(
      '/x?ids[]=a&ids[]=b&rules%5B0%5D%5Btype%5D=TRACK&rules.0.key=Order%20Completed&rules[1][type]=PAGE',
    );
    expect(read.get('ids.0')).toEqual(['a']);
    expect(read.get('ids.1')).toEqual(['b']);
    expect(queryObjects(read, 'rules')).toEqual([
      { type: 'TRACK', key: 'Order Completed' },
      { type: 'PAGE' },
    ]);
  });

  it('reads a long run of brackets in linear time', () => {
    const started = Date.now();
    readPublicQuery(`/x?${'['.repeat(50_000)}=1`);
    expect(Date.now() - started).toBeLessThan(500);
  });
});

describe('paginatePublic', () => {
  const items = ['a', 'b', 'c', 'd', 'e'];
  const page = (query: string) => paginatePublic(items, readPublicQuery(`/x?${query}`));

  it('pages with base64 offsets, omitting next on the last page and previous on the first', () => {
    expect(page('pagination[count]=2')).toEqual({
      items: ['a', 'b'],
      pagination: { current: 'MA==', next: 'Mg==', totalEntries: 5 },
    });
    expect(page('pagination[count]=2&pagination[cursor]=NA==')).toEqual({
      items: ['e'],
      pagination: { current: 'NA==', previous: 'Mg==', totalEntries: 5 },
    });
    expect(page('').items).toEqual(items);
  });

  it('refuses a count outside 1-1000 and a cursor it did not hand out, naming the field', () => {
    for (const [query, field] of [
      ['pagination[count]=0', 'pagination.count'],
      ['pagination[count]=1001', 'pagination.count'],
      ['pagination[count]=1.5', 'pagination.count'],
      ['pagination[count]=abc', 'pagination.count'],
      ['pagination[cursor]=bm9wZQ==', 'pagination.cursor'],
      ['pagination[cursor]=LTE=', 'pagination.cursor'],
      ['pagination[cursor]=MDE=', 'pagination.cursor'],
    ]) {
      let thrown: unknown;
      try {
        page(query);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(PublicApiError);
      expect(thrown).toMatchObject({ status: 422, type: 'ValidationFailure', field });
    }
  });
});

describe('tracking-plan rules across the two APIs', () => {
  it('maps Public rules onto v1beta parts and back without loss', () => {
    const schema = { type: 'object', properties: { properties: { type: 'object' } } };
    const rules = [
      { type: 'TRACK' as const, key: 'Order Completed', jsonSchema: schema, version: 2 },
      { type: 'COMMON' as const, jsonSchema: schema, version: 1 },
      { type: 'IDENTIFY' as const, jsonSchema: schema, version: 1 },
      { type: 'GROUP' as const, jsonSchema: schema, version: 1 },
      { type: 'SCREEN' as const, key: 'Home', jsonSchema: schema, version: 1 },
    ];
    const stored = v1betaRulesOf(rules);
    expect(stored).toMatchObject({
      events: [{ name: 'Order Completed', version: 2, rules: schema }],
      global: schema,
      identify: schema,
      group: schema,
    });
    expect(publicRulesOf(stored as never)).toEqual(rules);
  });
});
