// docker-compose.cluster.yml runs the cluster topology that the chaos test runs on loopback
// (cluster-topology.kit.ts): these checks hold the two to one shape and one environment, and have
// Compose validate the file (`config`) where a Compose command exists, as for docker-compose.yml.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load as parseYaml, YAML11_SCHEMA } from 'js-yaml';
import { serverStartFlags } from '../support/server-start-flags';
import { CLUSTER_ENVIRONMENT, CLUSTER_SHAPE } from './cluster-topology.shape';

const ROOT = join(__dirname, '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.cluster.yml');
const SERVER_FLAGS = serverStartFlags();

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, { name?: string } | null>;
}

/** The file as written, its anchors and merge keys (`<<:`, YAML 1.1) resolved as Compose resolves them. */
const written = parseYaml(readFileSync(COMPOSE_FILE, 'utf8'), { schema: YAML11_SCHEMA }) as ComposeFile;
const servicesRunning = (entry: string) =>
  Object.entries(written.services).filter(([, service]) =>
    service.command?.includes(`dist/apps/${entry}/src/main.js`),
  );
const natsNodes = Object.entries(written.services).filter(([, service]) =>
  service.image?.startsWith('nats:'),
);

function findCompose(): { command: string[] } | { reason: string } {
  const failures: string[] = [];
  for (const candidate of [['docker', 'compose'], ['docker-compose']]) {
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

describe('docker-compose.cluster.yml', () => {
  const compose = findCompose();
  const title = 'is a valid Compose file (`compose config`) that needs the admin token and the secret key';
  if ('reason' in compose) {
    const itWithoutCompose = it.skip;
    itWithoutCompose(`${title}: skipped, no usable Compose command (${compose.reason})`, () => undefined);
  } else {
    it(title, () => {
      const [binary, ...args] = compose.command;
      const run = (environment: Record<string, string>) =>
        execFileSync(binary, [...args, '-f', COMPOSE_FILE, 'config'], {
          cwd: ROOT,
          env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...environment },
          encoding: 'utf8',
          stdio: 'pipe',
          timeout: 60_000,
        });
      const resolved = parseYaml(
        run({
          TRIBUTARY_BOOTSTRAP_TOKEN: 'compose-config-check-token',
          TRIBUTARY_SECRET_KEY: '0'.repeat(64),
        }),
      ) as ComposeFile;
      for (const name of Object.keys(written.services)) expect(resolved.services[name]).toBeDefined();
      expect(resolved.services['router-1'].environment).toMatchObject({
        TRIBUTARY_BOOTSTRAP_TOKEN: 'compose-config-check-token',
        TRIBUTARY_SECRET_KEY: '0'.repeat(64),
      });
      // Without the shared secrets Compose refuses to start anything, naming the variable.
      expect(() => run({})).toThrow(/TRIBUTARY_BOOTSTRAP_TOKEN|TRIBUTARY_SECRET_KEY/);
    });
  }

  it('runs as many NATS nodes, tracking APIs, routers and Config APIs as the chaos test kit', () => {
    expect(natsNodes).toHaveLength(CLUSTER_SHAPE.natsNodes);
    expect(servicesRunning('tracking-api')).toHaveLength(CLUSTER_SHAPE.trackingApis);
    expect(servicesRunning('router')).toHaveLength(CLUSTER_SHAPE.routers);
    expect(servicesRunning('config-api')).toHaveLength(CLUSTER_SHAPE.configApis);
  });

  it('gives every app the kit environment, every NATS node and the same engines, started from its built entry point', () => {
    const nodeUrls = natsNodes.map(([name]) => `nats://${name}:4222`).join(',');
    for (const entry of ['config-api', 'tracking-api', 'router']) {
      for (const [name, service] of servicesRunning(entry)) {
        expect({ name, environment: service.environment }).toMatchObject({
          name,
          environment: {
            ...CLUSTER_ENVIRONMENT,
            NATS_URL: nodeUrls,
            EVENTSTORE_URL: 'kurrentdb://kurrentdb:2113?tls=false',
            TRIBUTARY_EGRESS: 'public',
          },
        });
        expect(service.command).toEqual(['node', ...SERVER_FLAGS, `dist/apps/${entry}/src/main.js`]);
        // A volume of its own: two tracking APIs never share a dedupe index file.
        expect(service.volumes).toEqual([`${name}-data:/data`]);
      }
    }
  });

  it('routes the NATS nodes into one JetStream cluster, each node with its own store', () => {
    const routes = natsNodes.map(([name]) => `nats://${name}:6222`).join(',');
    for (const [name, node] of natsNodes) {
      const command = node.command ?? [];
      const flag = (option: string) => command[command.indexOf(option) + 1];
      expect(command).toContain('-js');
      expect(flag('--server_name')).toBe(name);
      expect(flag('--cluster_name')).toBe('tributary');
      expect(flag('--routes')).toBe(routes);
      expect(node.volumes).toEqual([`${name}-data:/data`]);
    }
  });

  it('puts the tracking APIs behind a balancer that skips a dead replica and answers 503, never 502', () => {
    const balancer = written.services['tracking-balancer'];
    expect(balancer.ports).toEqual(['8080:8080']);
    const [configFile] = balancer.volumes?.[0].split(':') ?? [];
    const config = readFileSync(join(ROOT, configFile), 'utf8');
    for (const [name] of servicesRunning('tracking-api')) expect(config).toContain(`server ${name}:8080`);
    expect(config).toMatch(/proxy_next_upstream error timeout http_503 non_idempotent;/);
    expect(config).toMatch(/error_page 502 504 = @unavailable;/);
    expect(config).toMatch(/return 503 /);
    expect(config).toMatch(/add_header Retry-After 1 always;/);
  });

  it('names every volume for the deployment, whatever the project name', () => {
    for (const [volume, settings] of Object.entries(written.volumes)) {
      expect(settings?.name).toBe(`tributary-cluster_${volume}`);
    }
  });
});
