/**
 * How the PostgreSQL destination connects: connection strings checked, the host resolved through the
 * egress guard and the pool pinned to the checked address. Against the real PostgreSQL of
 * `TEST_DATABASE_URL` (127.0.0.1:5432, user postgres, by default) where a connection is made.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { normalizedMessageSchema, type NormalizedMessage } from '@tributary/contracts';
import { EgressGuard, type HostResolver } from '../delivery/egress/egress-guard';
import { parseEgressPolicy } from '../delivery/egress/egress-policy';
import { pinnedPostgresConnection, problemWithConnectionString } from './postgres-connection';
import { PostgresDeliveryAdapter } from './postgres.adapter';

const databaseUrl = new URL(
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
);
const schema = `tributary_egress_${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;

function trackMessage(): NormalizedMessage {
  return normalizedMessageSchema.parse({
    type: 'track',
    event: 'Signed Up',
    messageId: randomUUID(),
    userId: 'user-1',
    properties: {},
    context: {},
    integrations: {},
    receivedAt: '2026-01-02T03:04:06.000Z',
    timestamp: '2026-01-02T03:04:05.678Z',
  });
}

/** The test database's URL with another host, so that only the name changes. */
function withHost(host: string): string {
  const url = new URL(databaseUrl.href);
  url.hostname = host;
  return url.href;
}

/** Answers the test database's address for any name, counting the lookups. */
function resolverToTheTestDatabase(): { resolve: HostResolver; calls: () => number } {
  let calls = 0;
  const resolve: HostResolver = async () => {
    calls++;
    return [{ address: databaseUrl.hostname, family: 4 }];
  };
  return { resolve, calls: () => calls };
}

describe('problemWithConnectionString', () => {
  it.each([
    ['postgres://u:p@db.example:5432/app?sslcert=/etc/ssl/client.crt', 'sslcert'],
    ['postgres://u:p@db.example/app?sslkey=/etc/ssl/private/client.key', 'sslkey'],
    ['postgresql://u:p@db.example/app?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem', 'sslrootcert'],
    ['postgres://u:p@db.example/app?SSLCERT=/x', 'SSLCERT'],
    ['postgres://u:p@%2Fvar%2Frun%2Fpostgresql/app', 'Unix socket'],
    ['postgres://u:p@db.example/app?host=/var/run/postgresql', 'Unix socket'],
    ['postgres://u:p@%2Fvar%2Frun%2Fpostgresql/app?host=', 'Unix socket'],
    ['/var/run/postgresql app', 'postgres:// or postgresql://'],
    ['socket:/var/run/postgresql?db=app', 'postgres:// or postgresql://'],
    ['host=db.example dbname=app', 'postgres:// or postgresql://'],
    ['mysql://u:p@db.example/app', 'postgres:// or postgresql://'],
  ])('refuses %s (%s)', (connectionString, problem) => {
    expect(problemWithConnectionString(connectionString)).toEqual(expect.stringContaining(problem));
  });

  it('never quotes the connection string (it holds a password)', () => {
    expect(problemWithConnectionString('postgres://u:hunter2@db.example/app?sslkey=/k')).not.toContain(
      'hunter2',
    );
  });

  it.each([
    'postgres://u:p@db.example:5432/app',
    'postgresql://u@db.example/app?sslmode=require&application_name=tributary',
    'postgres://u:p@[2001:db8::1]:5432/app',
    'postgres://u:p@db.example/app?host=replica.example',
    '',
  ])('accepts %s', (connectionString) => {
    expect(problemWithConnectionString(connectionString)).toBeNull();
  });
});

describe('pinnedPostgresConnection', () => {
  it('sets host to the checked address and keeps the name for TLS verification', async () => {
    const resolver: HostResolver = async () => [{ address: '203.0.113.7', family: 4 }];
    const { poolConfig: config, serverMessagesShown } = await pinnedPostgresConnection(
      'postgres://writer:s3cret@warehouse.example:6543/analytics?sslmode=verify-full&application_name=trib',
      new EgressGuard(parseEgressPolicy('public', undefined), resolver),
    );
    expect(serverMessagesShown).toBe(true);
    expect(config).toMatchObject({
      host: '203.0.113.7',
      port: 6543,
      user: 'writer',
      database: 'analytics',
      application_name: 'trib',
      ssl: { servername: 'warehouse.example' },
    });
    expect(typeof config.password === 'function' && (config.password as () => string)()).toBe('s3cret');
  });

  it('keeps an empty password empty instead of falling back to PGPASSWORD', async () => {
    const { poolConfig: config } = await pinnedPostgresConnection(
      'postgres://writer@203.0.113.7/analytics',
      new EgressGuard(parseEgressPolicy('public', undefined)),
    );
    expect(typeof config.password === 'function' && (config.password as () => string)()).toBe('');
    expect(config.ssl).toBe(false);
  });

  it('refuses metadata and, under public, private addresses a name resolves to', async () => {
    const metadata: HostResolver = async () => [{ address: '169.254.169.254', family: 4 }];
    await expect(
      pinnedPostgresConnection(
        'postgres://u@db.example/app',
        new EgressGuard(parseEgressPolicy('open', undefined), metadata),
      ),
    ).rejects.toThrow(/link-local/);
    const privateAddress: HostResolver = async () => [{ address: '10.0.0.5', family: 4 }];
    await expect(
      pinnedPostgresConnection(
        'postgres://u@db.example/app',
        new EgressGuard(parseEgressPolicy('public', undefined), privateAddress),
      ),
    ).rejects.toThrow(/private 10\.0\.0\.0\/8/);
  });
});

describe('PostgresDeliveryAdapter behind the egress guard (real PostgreSQL)', () => {
  const inspector = new Client({ connectionString: databaseUrl.href });
  const adapters: PostgresDeliveryAdapter[] = [];
  const adapterWith = (guard: EgressGuard) => {
    const adapter = new PostgresDeliveryAdapter({ connectionTimeoutMs: 2_000, egressGuard: guard });
    adapters.push(adapter);
    return adapter;
  };
  const deliverTo = (adapter: PostgresDeliveryAdapter, connectionString: string) =>
    adapter.deliver({
      settings: { connection_string: connectionString, schema },
      messages: [trackMessage()],
    });

  beforeAll(() => inspector.connect());
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await inspector.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await inspector.end();
  });

  it('delivers through a name resolved once by the guard and connects to the checked address', async () => {
    const resolver = resolverToTheTestDatabase();
    const adapter = adapterWith(
      new EgressGuard(parseEgressPolicy('public', 'warehouse.example'), resolver.resolve),
    );
    const first = await deliverTo(adapter, withHost('warehouse.example'));
    const second = await deliverTo(adapter, withHost('warehouse.example'));
    expect([first[0]!.outcome, second[0]!.outcome]).toEqual(['delivered', 'delivered']);
    expect(resolver.calls()).toBe(1);
    const rows = await inspector.query(`SELECT count(*)::int AS count FROM "${schema}".tracks`);
    expect(rows.rows[0].count).toBe(2);
  });

  it('discards with egress_denied under public when the database is on loopback and not allowed', async () => {
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('public', undefined)));
    const [result] = await deliverTo(adapter, databaseUrl.href);
    expect(result).toMatchObject({ outcome: 'discard' });
    expect((result as { reason: string }).reason).toMatch(/^egress_denied: .*loopback/);
  });

  it('keeps what an internal server says about a statement out of reasons unless the allow-list names it', async () => {
    // A column the adapter created as a number, then a row with text for it: PostgreSQL refuses the
    // statement, and its message quotes the value.
    const table = `egress_probe_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const probe = (value: unknown) =>
      normalizedMessageSchema.parse({ ...trackMessage(), event: table, properties: { amount: value } });
    const deliverProbe = async (guard: EgressGuard) => {
      const adapter = adapterWith(guard);
      await adapter.deliver({
        settings: { connection_string: databaseUrl.href, schema },
        messages: [probe(1)],
      });
      await inspector
        .query(`ALTER TABLE "${schema}"."${table}" ADD CONSTRAINT positive CHECK (amount > 0)`)
        .catch(() => undefined);
      const [result] = await adapter.deliver({
        settings: { connection_string: databaseUrl.href, schema },
        messages: [probe(-5)],
      });
      return result as { outcome: string; reason: string };
    };
    const hidden = await deliverProbe(new EgressGuard(parseEgressPolicy('open', undefined)));
    expect(hidden.outcome).toBe('discard');
    expect(hidden.reason).toMatch(/PostgreSQL error 23514 \(message hidden: internal address\)$/);
    expect(hidden.reason).not.toContain('positive');
    const shown = await deliverProbe(new EgressGuard(parseEgressPolicy('open', databaseUrl.hostname)));
    expect(shown.reason).toContain('positive');
  });

  it.each([
    ['the metadata address', 'postgres://u:p@169.254.169.254:5432/app', /link-local/],
    ['an IPv4-mapped metadata address', 'postgres://u:p@[::ffff:a9fe:a9fe]:5432/app', /link-local/],
    [
      'a client certificate file',
      `${databaseUrl.href}?sslcert=/etc/ssl/certs/ca-certificates.crt`,
      /sslcert/,
    ],
    ['a private key file', `${databaseUrl.href}?sslkey=/etc/ssh/ssh_host_ed25519_key`, /sslkey/],
    ['a root certificate file', `${databaseUrl.href}?sslrootcert=/etc/passwd`, /sslrootcert/],
    ['a socket path host', 'postgres://postgres@%2Fvar%2Frun%2Fpostgresql/postgres', /Unix socket/],
    ['a socket path in host=', `${databaseUrl.href}?host=/var/run/postgresql`, /Unix socket/],
  ])('discards with egress_denied under open: %s', async (_, connectionString, detail) => {
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('open', undefined)));
    const [result] = await deliverTo(adapter, connectionString);
    expect(result).toMatchObject({ outcome: 'discard' });
    expect((result as { reason: string }).reason).toMatch(/^egress_denied: /);
    expect((result as { reason: string }).reason).toMatch(detail);
  });
});
