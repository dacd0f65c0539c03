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
    // One write key cannot fill the shared log for everyone unless the operator says so.
    expect(environment.TRACKING_RATE_LIMIT).toBe(1_000);
    expect(loadEnvironment({ TRACKING_RATE_LIMIT: '50' }).TRACKING_RATE_LIMIT).toBe(50);
    expect(loadEnvironment({ TRACKING_RATE_LIMIT: '0' }).TRACKING_RATE_LIMIT).toBeUndefined();
    expect(() => loadEnvironment({ TRACKING_RATE_LIMIT: 'lots' })).toThrow(/TRACKING_RATE_LIMIT/);
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
  it('takes PUBLIC_BASE_URL as an http(s) URL, unset by default', () => {
    expect(loadEnvironment({}).PUBLIC_BASE_URL).toBeUndefined();
    expect(loadEnvironment({ PUBLIC_BASE_URL: ' https://t.example.com/seg ' }).PUBLIC_BASE_URL).toBe(
      'https://t.example.com/seg',
    );
    expect(() => loadEnvironment({ PUBLIC_BASE_URL: 't.example.com' })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadEnvironment({ PUBLIC_BASE_URL: 'ftp://t.example.com' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('defaults to one replica and takes 1 to 5', () => {
    expect(loadEnvironment({}).NATS_STREAM_REPLICAS).toBe(1);
    expect(loadEnvironment({ NATS_STREAM_REPLICAS: '3' }).NATS_STREAM_REPLICAS).toBe(3);
    expect(loadEnvironment({ NATS_STREAM_REPLICAS: '5' }).NATS_STREAM_REPLICAS).toBe(5);
  });

  it.each(['0', '6', '2.5', 'three'])('refuses %s, naming the variable', (value) => {
    expect(() => loadEnvironment({ NATS_STREAM_REPLICAS: value })).toThrow(/NATS_STREAM_REPLICAS/);
  });
});

describe('POSTGRES_DESTINATION_MAX_TABLES and POSTGRES_DESTINATION_MAX_COLUMNS', () => {
  it('default to 200 event tables and 500 columns, and take other values', () => {
    expect(loadEnvironment({})).toMatchObject({
      POSTGRES_DESTINATION_MAX_TABLES: 200,
      POSTGRES_DESTINATION_MAX_COLUMNS: 500,
    });
    expect(
      loadEnvironment({ POSTGRES_DESTINATION_MAX_TABLES: '20', POSTGRES_DESTINATION_MAX_COLUMNS: '1600' }),
    ).toMatchObject({ POSTGRES_DESTINATION_MAX_TABLES: 20, POSTGRES_DESTINATION_MAX_COLUMNS: 1600 });
  });

  it.each([
    ['POSTGRES_DESTINATION_MAX_TABLES', '0'],
    ['POSTGRES_DESTINATION_MAX_TABLES', 'many'],
    // Fewer than the columns a table starts with, or more than PostgreSQL allows.
    ['POSTGRES_DESTINATION_MAX_COLUMNS', '15'],
    ['POSTGRES_DESTINATION_MAX_COLUMNS', '1601'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadEnvironment({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('TRIBUTARY_EGRESS and TRIBUTARY_EGRESS_ALLOW', () => {
  it('default to open with nothing extra allowed', () => {
    const environment = loadEnvironment({});
    expect(environment.TRIBUTARY_EGRESS).toBe('open');
    expect(environment.TRIBUTARY_EGRESS_ALLOW).toBeUndefined();
  });

  it('take public and an allow-list of names, addresses and CIDRs', () => {
    const environment = loadEnvironment({
      TRIBUTARY_EGRESS: 'public',
      TRIBUTARY_EGRESS_ALLOW: 'postgres, 10.20.0.0/16,fd00:1::/32',
    });
    expect(environment.TRIBUTARY_EGRESS).toBe('public');
    expect(environment.TRIBUTARY_EGRESS_ALLOW).toBe('postgres, 10.20.0.0/16,fd00:1::/32');
  });

  it('stop the start with a message naming the variable and the bad entry', () => {
    expect(() => loadEnvironment({ TRIBUTARY_EGRESS: 'closed' })).toThrow(/TRIBUTARY_EGRESS/);
    expect(() => loadEnvironment({ TRIBUTARY_EGRESS_ALLOW: 'postgres,10.0.0.0/40' })).toThrow(
      /invalid configuration: TRIBUTARY_EGRESS_ALLOW: "10\.0\.0\.0\/40" has an invalid prefix length/,
    );
  });
});

describe('Config API limits and workspace quotas', () => {
  it('defaults to 256 KiB bodies nested at most 32 deep and the documented quotas', () => {
    expect(loadEnvironment({})).toMatchObject({
      CONFIG_API_MAX_BODY_BYTES: 262_144,
      CONFIG_API_MAX_JSON_DEPTH: 32,
      WORKSPACE_MAX_SOURCES: 1_000,
      WORKSPACE_MAX_DESTINATIONS: 1_000,
      DESTINATION_MAX_FILTERS: 100,
      WORKSPACE_MAX_TRACKING_PLANS: 1_000,
      WORKSPACE_MAX_OAUTH_APPLICATIONS: 100,
      WORKSPACE_MAX_RUNNING_REPLAYS: 4,
    });
  });

  it('takes other values and names the variable of a wrong one', () => {
    expect(loadEnvironment({ WORKSPACE_MAX_SOURCES: '5', CONFIG_API_MAX_JSON_DEPTH: '64' })).toMatchObject({
      WORKSPACE_MAX_SOURCES: 5,
      CONFIG_API_MAX_JSON_DEPTH: 64,
    });
    expect(() => loadEnvironment({ WORKSPACE_MAX_SOURCES: '0' })).toThrow(/WORKSPACE_MAX_SOURCES/);
    expect(() => loadEnvironment({ CONFIG_API_MAX_JSON_DEPTH: '100000' })).toThrow(
      /CONFIG_API_MAX_JSON_DEPTH/,
    );
    expect(() => loadEnvironment({ CONFIG_API_MAX_BODY_BYTES: '64mb' })).toThrow(/CONFIG_API_MAX_BODY_BYTES/);
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

describe('ROUTER_PULL_EXPIRES', () => {
  it('defaults to 5 s and takes a duration of at least 1 s', () => {
    expect(loadEnvironment({}).ROUTER_PULL_EXPIRES).toBe(2_000);
    expect(loadEnvironment({ ROUTER_PULL_EXPIRES: '2s' }).ROUTER_PULL_EXPIRES).toBe(2_000);
    expect(loadEnvironment({ ROUTER_PULL_EXPIRES: '30s' }).ROUTER_PULL_EXPIRES).toBe(30_000);
  });

  it('stops the start on an expiry under 1 s, zero or not a duration, naming the variable', () => {
    expect(() => loadEnvironment({ ROUTER_PULL_EXPIRES: '999ms' })).toThrow(
      /ROUTER_PULL_EXPIRES.*at least 1s/,
    );
    expect(() => loadEnvironment({ ROUTER_PULL_EXPIRES: '0' })).toThrow(/ROUTER_PULL_EXPIRES/);
    expect(() => loadEnvironment({ ROUTER_PULL_EXPIRES: 'fast' })).toThrow(/ROUTER_PULL_EXPIRES/);
  });
});

describe('ROUTER_ACK_WAIT', () => {
  it('defaults to 5 s and takes a duration of at least 1 s', () => {
    expect(loadEnvironment({}).ROUTER_ACK_WAIT).toBe(5_000);
    expect(loadEnvironment({ ROUTER_ACK_WAIT: '10s' }).ROUTER_ACK_WAIT).toBe(10_000);
    expect(loadEnvironment({ ROUTER_ACK_WAIT: '1500' }).ROUTER_ACK_WAIT).toBe(1_500);
  });

  it('stops the start on a wait under 1 s or not a duration, naming the variable', () => {
    expect(() => loadEnvironment({ ROUTER_ACK_WAIT: '500ms' })).toThrow(/ROUTER_ACK_WAIT.*at least 1s/);
    expect(() => loadEnvironment({ ROUTER_ACK_WAIT: 'soon' })).toThrow(/ROUTER_ACK_WAIT/);
  });
});

describe('FUNCTION_* (tenant functions)', () => {
  it('defaults to 5 s, 128 MB, 128 KiB of code and one process', () => {
    expect(loadEnvironment({})).toMatchObject({
      FUNCTION_TIMEOUT: 5_000,
      FUNCTION_MEMORY_MB: 128,
      FUNCTION_MAX_CODE_BYTES: 131_072,
      FUNCTION_WORKERS: 1,
    });
    expect(
      loadEnvironment({ FUNCTION_TIMEOUT: '30s', FUNCTION_MEMORY_MB: '256', FUNCTION_WORKERS: '2' }),
    ).toMatchObject({
      FUNCTION_TIMEOUT: 30_000,
      FUNCTION_MEMORY_MB: 256,
      FUNCTION_WORKERS: 2,
    });
  });

  it.each([
    ['FUNCTION_TIMEOUT', '500ms'],
    ['FUNCTION_TIMEOUT', '61s'],
    ['FUNCTION_MEMORY_MB', '8'],
    ['FUNCTION_MEMORY_MB', '2048'],
    ['FUNCTION_WORKERS', '0'],
    ['FUNCTION_MAX_CODE_BYTES', 'lots'],
  ])('refuses %s=%s with a message naming it', (name, value) => {
    expect(() => loadEnvironment({ [name]: value })).toThrow(new RegExp(name));
  });
});
