import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serverStartFlags } from './support/server-start-flags';

/**
 * `npm start` builds with tsconfig.build.json; a test file or a test helper pulled into that build
 * (jest globals) breaks it while every test still passes. This keeps the README's run command honest.
 */
it('the production build type-checks', async () => {
  const root = join(__dirname, '..');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--noEmit'], {
    cwd: root,
    timeout: 170_000,
  }).catch((error: { stdout?: string; code?: number }) => ({ stdout: error.stdout ?? '', failed: true }));
  expect('failed' in result ? result.stdout : '').toBe('');
}, 180_000);

it('npm start runs the file nest build writes for the tributary app, after building what changed', () => {
  const root = join(__dirname, '..');
  const nestCli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8'));
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const builtEntry = `dist/${nestCli.projects.tributary.entryFile}.js`;
  // With the server's node flags (a larger young generation, BENCHMARKS.md), which the bench starts its
  // server with too, and the image and docker-compose.yml (`test/topology/docker-compose.e2e-spec.ts`).
  const flags = serverStartFlags();
  expect(flags).toContain('--max-semi-space-size=32');
  // `npm start` is the local install: its defaults file lets destinations reach the team's own services.
  expect(scripts.start).toBe(
    `node scripts/build-changed.js && node ${flags.join(' ')} --env-file=${LOCAL_START_ENV} ${builtEntry}`,
  );
  expect(scripts['start:prod']).toBe(`node ${flags.join(' ')} ${builtEntry}`);
  // The build step checks for that same file and builds the server with the swc build.
  const buildStep = readFileSync(join(root, 'scripts', 'build-changed.js'), 'utf8');
  expect(buildStep).toContain(`output: '${builtEntry}'`);
  expect(buildStep).toContain("join(root, 'scripts', 'build-server.js')");
});

const LOCAL_START_ENV = 'scripts/local-start.env';

it('npm start sets TRIBUTARY_EGRESS=open for a local install, and a value from the environment wins', async () => {
  const root = join(__dirname, '..');
  const egressOf = async (environment: Record<string, string>) =>
    (
      await promisify(execFile)(
        process.execPath,
        [`--env-file=${LOCAL_START_ENV}`, '-e', 'console.log(process.env.TRIBUTARY_EGRESS)'],
        { cwd: root, timeout: 30_000, env: { PATH: process.env['PATH'] ?? '', ...environment } },
      )
    ).stdout.trim();
  expect(await egressOf({})).toBe('open');
  expect(await egressOf({ TRIBUTARY_EGRESS: 'public' })).toBe('public');
}, 60_000);

it("the swc build writes every app's entry where nest build writes it, and the server starts from it", async () => {
  const root = join(__dirname, '..');
  const outDir = mkdtempSync(join(tmpdir(), 'tributary-swc-build-'));
  try {
    await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-server.js')], {
      cwd: root,
      env: { ...process.env, TRIBUTARY_BUILD_OUT_DIR: outDir },
      timeout: 120_000,
    });
    const nestCli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8'));
    for (const project of Object.values<{ type: string; entryFile?: string }>(nestCli.projects)) {
      if (project.type === 'application')
        expect(existsSync(join(outDir, `${project.entryFile}.js`))).toBe(true);
    }
    // Loading the all-in-one's composition resolves every `@tributary/*` alias the build rewrote.
    const loaded = await promisify(execFile)(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(join(outDir, 'apps/tributary/src/tributary.surfaces.js'))}); console.log('loaded')`,
      ],
      // Outside the repository, packages resolve through NODE_PATH.
      { cwd: root, timeout: 60_000, env: { ...process.env, NODE_PATH: join(root, 'node_modules') } },
    );
    expect(loaded.stdout.trim()).toBe('loaded');
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}, 180_000);
