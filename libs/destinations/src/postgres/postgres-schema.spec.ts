import { defaultSchemaOfSource, refusedSchemaReason, resolveWarehouseSchema } from './postgres-schema';

describe('defaultSchemaOfSource', () => {
  it.each([
    ['web-app', 'web_app'],
    ['Web-App', 'web_app'],
    ['ios_prod', 'ios_prod'],
    ['1st-site', 'source_1st_site'],
    ['public', 'source_public'],
    ['PUBLIC', 'source_public'],
    ['pg-data', 'source_pg_data'],
    ['information-schema', 'source_information_schema'],
  ])('names the schema of source %s %s', (slug, schema) => {
    expect(defaultSchemaOfSource(slug)).toBe(schema);
  });

  it('gives a valid, non-system schema name of at most 63 bytes for any slug', () => {
    for (const slug of ['a'.repeat(100), `pg_${'x'.repeat(97)}`, '9'.repeat(100), 'ß-unicode']) {
      const schema = defaultSchemaOfSource(slug);
      expect(Buffer.byteLength(schema)).toBeLessThanOrEqual(63);
      expect(refusedSchemaReason(schema)).toBeNull();
      expect(schema).not.toBe('public');
    }
  });
});

describe('resolveWarehouseSchema', () => {
  it("takes the source's schema when the setting is empty, and an explicit one otherwise", () => {
    expect(resolveWarehouseSchema(undefined, 'web-app')).toEqual({ schema: 'web_app' });
    expect(resolveWarehouseSchema('', 'web-app')).toEqual({ schema: 'web_app' });
    expect(resolveWarehouseSchema(null, 'web-app')).toEqual({ schema: 'web_app' });
    expect(resolveWarehouseSchema('analytics', 'web-app')).toEqual({ schema: 'analytics' });
    // An explicit public is the operator's choice: allowed (Tributary still writes only its own tables).
    expect(resolveWarehouseSchema('public', 'web-app')).toEqual({ schema: 'public' });
  });

  it('refuses system schemas, names that could break out of an identifier, and a missing source', () => {
    expect(resolveWarehouseSchema('pg_catalog', 'web')).toEqual({
      problem: expect.stringContaining('system schema'),
      systemSchema: true,
    });
    expect(resolveWarehouseSchema('information_schema', 'web')).toMatchObject({ systemSchema: true });
    expect(resolveWarehouseSchema('x"; drop', 'web')).toEqual({
      problem: expect.stringContaining('must match'),
      systemSchema: false,
    });
    expect(resolveWarehouseSchema(42, 'web')).toMatchObject({ systemSchema: false });
    expect(resolveWarehouseSchema('', undefined)).toMatchObject({
      problem: expect.stringContaining('no default schema'),
    });
  });
});
