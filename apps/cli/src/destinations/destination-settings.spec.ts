import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readDestinationSettings, withoutSecrets } from './destination-settings';

const CATALOG = [
  { name: 'url', type: 'string' },
  { name: 'headers', type: 'map' },
  { name: 'shared_secret', type: 'password' },
  { name: 'batch_size', type: 'number' },
  { name: 'signature_timestamp', type: 'boolean' },
  { name: 'events', type: 'list' },
];

describe('readDestinationSettings', () => {
  let directory: string;
  beforeAll(() => (directory = mkdtempSync(join(tmpdir(), 'destination-settings-'))));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('types flag values after the catalog, lets flags win over the file, and collects the secrets sent', () => {
    const file = join(directory, 'settings.json');
    writeFileSync(
      file,
      JSON.stringify({
        url: 'https://a.example',
        shared_secret: 'from-file',
        headers: { Authorization: 'Bearer x1' },
      }),
    );
    const settings = readDestinationSettings(
      ['url=https://b.example/?q=a=b', 'batch_size=50', 'signature_timestamp=true', 'events=["a","b"]'],
      file,
      'webhooks',
      CATALOG,
    );
    expect(settings.values).toEqual({
      url: 'https://b.example/?q=a=b',
      shared_secret: 'from-file',
      headers: { Authorization: 'Bearer x1' },
      batch_size: 50,
      signature_timestamp: true,
      events: ['a', 'b'],
    });
    expect(settings.secretsOnCommandLine).toEqual([]);
    expect(settings.secretValues.sort()).toEqual(['Bearer x1', 'from-file']);
  });

  it('names the secrets given on the command line, but not the mask sent back unchanged', () => {
    const settings = readDestinationSettings(
      ['shared_secret=s3cret', 'headers={"X-Key":"********"}'],
      undefined,
      'webhooks',
      CATALOG,
    );
    expect(settings.secretsOnCommandLine).toEqual(['shared_secret', 'headers']);
    expect(settings.secretValues).toEqual(['s3cret']);
  });

  it.each([
    [['colour=blue'], /"colour" is not a setting of webhooks; its settings: url, headers/],
    [['url'], /--setting takes key=value, not "url"/],
    [['=x'], /--setting takes key=value/],
    [['batch_size=many'], /"many" is not a number/],
    [['batch_size='], /"" is not a number/],
    [['signature_timestamp=1'], /"1" is not true or false/],
    [['events=a,b'], /a list value is JSON/],
  ])('refuses %j before any request', (flags, message) => {
    expect(() => readDestinationSettings(flags, undefined, 'webhooks', CATALOG)).toThrow(message);
  });

  it('refuses a settings file that is missing, not JSON, not an object, or names an unknown setting', () => {
    const path = (name: string, text: string) => {
      writeFileSync(join(directory, name), text);
      return join(directory, name);
    };
    expect(() => readDestinationSettings([], join(directory, 'absent.json'), 'webhooks', CATALOG)).toThrow(
      /ENOENT/,
    );
    expect(() => readDestinationSettings([], path('bad.json', '{'), 'webhooks', CATALOG)).toThrow(
      /cannot read the settings file/,
    );
    expect(() => readDestinationSettings([], path('array.json', '[]'), 'webhooks', CATALOG)).toThrow(
      /JSON object/,
    );
    expect(() => readDestinationSettings([], path('null.json', 'null'), 'webhooks', CATALOG)).toThrow(
      /JSON object/,
    );
    expect(() =>
      readDestinationSettings([], path('unknown.json', '{"colour":1}'), 'webhooks', CATALOG),
    ).toThrow(/"colour"/);
  });
});

describe('withoutSecrets', () => {
  it('masks every occurrence of every secret sent', () => {
    expect(withoutSecrets('bad value s3cret near s3cret and k2', ['s3cret', 'k2'])).toBe(
      'bad value ******** near ******** and ********',
    );
  });
});
