import { loadEnvironment } from './environment';

describe('loadEnvironment', () => {
  it('gives the embedded defaults', () => {
    const environment = loadEnvironment({});
    expect(environment.PORT).toBe(8080);
    expect(environment.DATA_DIR).toBe('./data');
    expect(environment.EVENTSTORE_URL).toBeUndefined();
    expect(environment.CONFIG_API_RATE_LIMIT).toBe(200);
  });

  it('names the variable of a wrong value', () => {
    expect(() => loadEnvironment({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadEnvironment({ TRIBUTARY_SECRET_KEY: 'abc' })).toThrow(/TRIBUTARY_SECRET_KEY/);
    expect(() =>
      loadEnvironment({ TRIBUTARY_ADMIN_EMAIL: 'not-an-email', TRIBUTARY_ADMIN_PASSWORD: 'x' }),
    ).toThrow(/TRIBUTARY_ADMIN_EMAIL/);
  });

  it('needs the admin email and password together', () => {
    expect(() => loadEnvironment({ TRIBUTARY_ADMIN_EMAIL: 'a@example.com' })).toThrow(/together/);
  });

  it('treats blank values as unset', () => {
    expect(loadEnvironment({ EVENTSTORE_URL: '  ' }).EVENTSTORE_URL).toBeUndefined();
  });
});

describe('tracking settings', () => {
  it('parses durations and defaults', () => {
    const environment = loadEnvironment({});
    expect(environment.DEDUPE_WINDOW).toBe(24 * 3_600_000);
    expect(environment.RETENTION).toBe(7 * 86_400_000);
    expect(environment.TRIBUTARY_REGION).toBe('us');
    expect(environment.TRACKING_RATE_LIMIT).toBeUndefined();
    expect(loadEnvironment({ DEDUPE_WINDOW: '90s', RETENTION: '2d' })).toMatchObject({
      DEDUPE_WINDOW: 90_000,
      RETENTION: 2 * 86_400_000,
    });
    expect(() => loadEnvironment({ DEDUPE_WINDOW: 'a day' })).toThrow(/DEDUPE_WINDOW/);
    expect(() => loadEnvironment({ TRIBUTARY_REGION: 'mars' })).toThrow(/TRIBUTARY_REGION/);
    expect(() => loadEnvironment({ TRACKING_RATE_LIMIT: '-1' })).toThrow(/TRACKING_RATE_LIMIT/);
  });
});

describe('NATS_STREAM_REPLICAS', () => {
  it('defaults to one replica and takes 1 to 5', () => {
    expect(loadEnvironment({}).NATS_STREAM_REPLICAS).toBe(1);
    expect(loadEnvironment({ NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3);
    expect(loadEnvironment({ NATS_STREAM_REPLICAS: '5' }).NATS_STREAM_REPLICAS).toBe(5);
  });

  it.each(['0', '6', '2.5', 'three'])('refuses %s, naming the variable', (value) => {
    expect(() => loadEnvironment({ NATS_STREAM_REPLICAS: value })).toThrow(/NATS_STREAM_REPLICAS/);
  });
});

describe('METRICS_PORT and METRICS_HOST', () => {
  it('default to 9464 on loopback', () => {
    expect(loadEnvironment({})).toMatchObject({ METRICS_PORT: 9464, METRICS_HOST: '127.0.0.1' });
    expect(loadEnvironment({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({
      METRICS_PORT: 0,
      METRICS_HOST: '0.0.0.0',
    });
  });

  it('refuses a wrong port, and the public port, naming the variable', () => {
    expect(() => loadEnvironment({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
    expect(() => loadEnvironment({ METRICS_PORT: 'metrics' })).toThrow(/METRICS_PORT/);
    expect(() => loadEnvironment({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
  });
});

describe('TRIBUTARY_BOOTSTRAP_TOKEN', () => {
  it('takes a random value of 32 characters or more', () => {
    const token = 'Zk3vQ9xR2mWp7LtY4bN8cH1sJ6dF0gAe';
    expect(loadEnvironment({ TRIBUTARY_BOOTSTRAP_TOKEN: token }).TRIBUTARY_BOOTSTRAP_TOKEN).toBe(token);
    expect(loadEnvironment({}).TRIBUTARY_BOOTSTRAP_TOKEN).toBeUndefined();
  });

  it.each([
    ['a short one', 'admin-token'],
    ['31 characters', 'Zk3vQ9xR2mWp7LtY4bN8cH1sJ6dF0gA'],
    ['one character repeated', 'a'.repeat(64)],
    ['a few characters repeated', 'abcabcabcabcabcabcabcabcabcabcabcabc'],
  ])('refuses %s at start, naming the variable', (_label, token) => {
    expect(() => loadEnvironment({ TRIBUTARY_BOOTSTRAP_TOKEN: token })).toThrow(/TRIBUTARY_BOOTSTRAP_TOKEN/);
  });
});

describe('TRIBUTARY_PREVIOUS_SECRET_KEYS', () => {
  const key = (digit: string) => digit.repeat(64);

  it('takes one or more 64-hex keys, comma-separated', () => {
    expect(loadEnvironment({ TRIBUTARY_PREVIOUS_SECRET_KEYS: key('a') }).TRIBUTARY_PREVIOUS_SECRET_KEYS).toBe(
      key('a'),
    );
    expect(
      loadEnvironment({ TRIBUTARY_PREVIOUS_SECRET_KEYS: `${key('a')}, ${key('B')}` })
        .TRIBUTARY_PREVIOUS_SECRET_KEYS,
    ).toBe(`${key('a')}, ${key('B')}`);
  });

  it.each(['abc', `${'a'.repeat(64)},`, `${'a'.repeat(64)};${'b'.repeat(64)}`, 'g'.repeat(64)])(
    'refuses %s, naming the variable',
    (value) => {
      expect(() => loadEnvironment({ TRIBUTARY_PREVIOUS_SECRET_KEYS: value })).toThrow(
        /TRIBUTARY_PREVIOUS_SECRET_KEYS/,
      );
    },
  );
});
