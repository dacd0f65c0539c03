// docker-compose.yml and the Dockerfile describe the production topology; nothing else runs them in
// the test suite, so these checks keep them consistent with the apps. The full check is Compose's
// own `config` (it resolves anchors and validates the schema); it runs when a usable `docker compose`
// (v2) or `docker-compose` (v1, Debian's package, which `.ci/run` installs) exists and is skipped
// otherwise, saying why. v1 has no `config --format json`, so both print YAML and the test parses it.
// The structural checks below need no Docker and read the text with anchored patterns.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { serverStartFlags } from '../support/server-start-flags';

const ROOT = join(__dirname, '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');
const composeText = readFileSync(COMPOSE_FILE, 'utf8');
const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const nestCli = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as {
  projects: Record<string, { type: string; entryFile: string }>;
};
const STANDALONE_APPS = ['config-api', 'tracking-api', 'router'];
/** Every process starts with the server's node flags, those of `npm run start:prod` (`test/production-build.e2e-spec.ts`). */
const SERVER_FLAGS = serverStartFlags();

/** The text of one top-level service: from `  <name>:` to the next line indented two spaces or less. */
function serviceBlock(name: string): string {
  const services = composeText.slice(composeText.indexOf('\nservices:\n'));
  const start = services.search(new RegExp(`^  ${name}:\\s*$`, 'm'));
  if (start < 0) throw new Error(`service ${name} not found in docker-compose.yml`);
  const rest = services.slice(start).split('\n');
  const end = rest.findIndex((line, index) => index > 0 && /^ {0,2}\S/.test(line));
  return rest.slice(0, end < 0 ? undefined : end).join('\n');
}

/** A command that runs Compose here, or why there is none. */
function findCompose(): { command: string[] } | { reason: string } {
  const candidates = [['docker', 'compose'], ['docker-compose']];
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      execFileSync(candidate[0], [...candidate.slice(1), 'version'], { stdio: 'pipe', timeout: 20_000 });
      return { command: candidate };
    } catch (error) {
      const output = `${(error as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n')[0];
      failures.push(`\`${candidate.join(' ')}\`: ${output || (error as Error).message}`);
    }
  }
  return { reason: failures.join('; ') };
}

describe('docker-compose.yml', () => {
  const compose = findCompose();
  const title = 'is a valid Compose file with the services and shared environment (`compose config`)';
  if ('reason' in compose) {
    // Reported as skipped, with the reason, wherever no Compose command works (`.ci/run` installs one).
    const itWithoutCompose = it.skip;
    itWithoutCompose(`${title}: skipped, no usable Compose command (${compose.reason})`, () => undefined);
  } else {
    it(title, () => {
      const [binary, ...args] = compose.command;
      const resolved = execFileSync(binary, [...args, '-f', COMPOSE_FILE, 'config'], {
        cwd: ROOT,
        env: {
          ...process.env,
          TRIBUTARY_BOOTSTRAP_TOKEN: 'compose-config-check-token',
          TRIBUTARY_SECRET_KEY: '0'.repeat(64),
          POSTGRES_PASSWORD: 'compose-config-check-password',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      const config = parseYaml(resolved) as {
        services: Record<
          string,
          { image?: string; environment?: Record<string, string>; command?: string[] }
        >;
        volumes: Record<string, { name?: string } | null>;
      };
      expect(Object.keys(config.services).sort()).toEqual(
        ['config-api', 'kurrentdb', 'nats', 'postgres', 'router', 'tracking-api'].sort(),
      );
      for (const app of STANDALONE_APPS) {
        expect(config.services[app].environment).toMatchObject({
          NATS_URL: 'nats://nats:4222',
          EVENTSTORE_URL: 'kurrentdb://kurrentdb:2113?tls=false',
          DATA_DIR: '/data',
          TRIBUTARY_BOOTSTRAP_TOKEN: 'compose-config-check-token',
          TRIBUTARY_SECRET_KEY: '0'.repeat(64),
          TRIBUTARY_EGRESS: 'public',
          TRIBUTARY_EGRESS_ALLOW: 'postgres',
        });
        expect(config.services[app].command).toEqual([
          'node',
          ...SERVER_FLAGS,
          `dist/apps/${app}/src/main.js`,
        ]);
      }
      expect(config.services.postgres.environment?.['POSTGRES_PASSWORD']).toBe(
        'compose-config-check-password',
      );
      // A release line, not `latest`, which would move to the next major on any pull.
      expect(config.services.kurrentdb.image).toMatch(/^kurrentplatform\/kurrentdb:\d+\.\d+(\.\d+)?$/);
      // Fixed volume names: the data stays with the deployment whatever the project name is.
      for (const volume of ['nats-data', 'kurrentdb-data', 'postgres-data', 'tributary-data']) {
        expect(config.volumes[volume]?.name).toBe(`tributary_${volume}`);
      }
    });
  }

  it('runs NATS with JetStream on a persistent volume, and KurrentDB insecure single-node on one', () => {
    const nats = serviceBlock('nats');
    expect(nats).toMatch(/command: \[[^\]]*'-js'/);
    expect(nats).toMatch(/- nats-data:\/data/);
    expect(nats).toMatch(/'-sd', '\/data'/);
    const kurrentdb = serviceBlock('kurrentdb');
    expect(kurrentdb).toMatch(/KURRENTDB_INSECURE: 'true'/);
    expect(kurrentdb).toMatch(/KURRENTDB_CLUSTER_SIZE: '1'/);
    expect(kurrentdb).toMatch(/- kurrentdb-data:\/var\/lib\/kurrentdb/);
    expect(serviceBlock('postgres')).toMatch(/- postgres-data:\/var\/lib\/postgresql\/data/);
    expect(composeText).toMatch(/^volumes:\n(?: {2}[a-z-]+:\n)*/m);
    for (const volume of ['nats-data', 'kurrentdb-data', 'postgres-data', 'tributary-data']) {
      expect(composeText).toMatch(new RegExp(`^  ${volume}:\\s*$`, 'm'));
    }
  });

  it('starts each standalone app from the image by a command that nest-cli builds', () => {
    for (const app of STANDALONE_APPS) {
      const block = serviceBlock(app);
      expect(block).toMatch(/<<: \*tributary-app/);
      const flags = SERVER_FLAGS.map((flag) => `'${flag}', `).join('');
      expect(block).toContain(`command: ['node', ${flags}'dist/apps/${app}/src/main.js']`);
      // `nest build <app>` writes `dist/<entryFile>.js`: the command runs exactly that file.
      expect(nestCli.projects[app]).toMatchObject({ type: 'application', entryFile: `apps/${app}/src/main` });
    }
    expect(serviceBlock('router')).toMatch(/deploy:\n\s+replicas: 2/);
  });

  it('gives every app the same engines, data dir, bootstrap token and secret key, and a readiness check', () => {
    const anchor = composeText.slice(
      composeText.indexOf('x-tributary-app: &tributary-app'),
      composeText.indexOf('\nservices:\n'),
    );
    expect(anchor).toMatch(/NATS_URL: nats:\/\/nats:4222/);
    expect(anchor).toMatch(/EVENTSTORE_URL: kurrentdb:\/\/kurrentdb:2113\?tls=false/);
    expect(anchor).toMatch(/DATA_DIR: \/data/);
    // Required, not defaulted: without them the apps would not share one admin token and one key.
    expect(anchor).toMatch(/TRIBUTARY_BOOTSTRAP_TOKEN: \$\{TRIBUTARY_BOOTSTRAP_TOKEN:\?/);
    expect(anchor).toMatch(/TRIBUTARY_SECRET_KEY: \$\{TRIBUTARY_SECRET_KEY:\?/);
    expect(anchor).toMatch(/healthcheck:[\s\S]*\/health\/ready/);
    expect(anchor).toMatch(/condition: service_healthy/);
  });

  it('limits destinations to public addresses plus its own PostgreSQL, and keeps no default password', () => {
    const anchor = composeText.slice(
      composeText.indexOf('x-tributary-app: &tributary-app'),
      composeText.indexOf('\nservices:\n'),
    );
    expect(anchor).toMatch(/^ {4}TRIBUTARY_EGRESS: public$/m);
    expect(anchor).toMatch(/^ {4}TRIBUTARY_EGRESS_ALLOW: \$\{TRIBUTARY_EGRESS_ALLOW:-postgres\}$/m);
    expect(serviceBlock('postgres')).toMatch(/POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?/);
    // Every password-like variable is required (`:?`), never defaulted (`:-`).
    const defaultedSecrets = composeText.match(/\$\{[A-Z_]*(PASSWORD|SECRET|TOKEN)[A-Z_]*:-[^}]*\}/g);
    expect(defaultedSecrets).toBeNull();
  });

  it('lets /metrics listen on the compose network only: METRICS_HOST 0.0.0.0, its port published nowhere', () => {
    const anchor = composeText.slice(
      composeText.indexOf('x-tributary-app: &tributary-app'),
      composeText.indexOf('\nservices:\n'),
    );
    expect(anchor).toMatch(/^ {4}METRICS_HOST: 0\.0\.0\.0$/m);
    expect(composeText).not.toMatch(/9464:/);
    for (const app of STANDALONE_APPS) expect(serviceBlock(app)).not.toMatch(/METRICS_PORT/);
  });
});

describe('Dockerfile', () => {
  it('builds every app on node:24-bookworm-slim and runs on production dependencies only', () => {
    const stages = [...dockerfileText.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((match) => [
      match[1],
      match[2],
    ]);
    expect(stages).toEqual([
      ['node:24-bookworm-slim', 'build'],
      ['node:24-bookworm-slim', 'production-dependencies'],
      ['node:24-bookworm-slim', 'runtime'],
    ]);
    const applications = Object.entries(nestCli.projects)
      .filter(([, project]) => project.type === 'application')
      .map(([name]) => name)
      .sort();
    const built = /for app in ([a-z -]+); do npx nest build/.exec(dockerfileText)?.[1].trim().split(/\s+/);
    expect(built?.sort()).toEqual(applications);
    expect(dockerfileText).toMatch(/npm ci --omit=dev/);
    expect(dockerfileText).toMatch(/COPY --from=production-dependencies \/app\/node_modules/);
    const command = /^CMD (\[.*\])$/m.exec(dockerfileText)?.[1];
    expect(JSON.parse(command ?? 'null')).toEqual([
      'node',
      ...SERVER_FLAGS,
      'dist/apps/tributary/src/main.js',
    ]);
  });
});
