import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_BUILDING_MARKER, ConsoleBuild } from './console-build';

describe('ConsoleBuild', () => {
  let root: string;
  let build: ConsoleBuild;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tributary-console-build-'));
    const directory = join(root, 'dist');
    mkdirSync(join(directory, 'assets'), { recursive: true });
    writeFileSync(join(directory, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(directory, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(root, 'secret.txt'), 'not for the web');
    symlinkSync(join(root, 'secret.txt'), join(directory, 'assets', 'link.txt'));
    build = new ConsoleBuild(directory);
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('serves a built asset with its type, as immutable', async () => {
    const file = await build.read('assets/index-abc123.js');
    expect(file).toMatchObject({ contentType: 'text/javascript; charset=utf-8', immutable: true });
    expect(file!.body.toString()).toBe('console.log(1)');
  });

  it('answers index.html for the root and for every page path of the app, never cached as immutable', async () => {
    for (const path of ['', '/', 'workspaces/acme/sources/web/debugger', 'sign-in']) {
      const file = await build.read(path);
      expect({ path, type: file?.contentType, immutable: file?.immutable }).toEqual({
        path,
        type: 'text/html; charset=utf-8',
        immutable: false,
      });
    }
  });

  it('answers nothing for a missing asset and for anything outside the build', async () => {
    expect(await build.read('assets/missing.js')).toBeNull();
    expect(await build.read('../secret.txt')).toBeNull();
    expect(await build.read('assets/../../secret.txt')).toBeNull();
    expect(await build.read('assets/link.txt')).toBeNull();
    // A path with a NUL byte is never looked up on disk: the app's page answers it.
    expect((await build.read('secret.txt\0'))?.contentType).toBe('text/html; charset=utf-8');
  });

  it('has nothing to serve when the console was not built', async () => {
    expect(await new ConsoleBuild(null).read('index.html')).toBeNull();
  });
});

describe('ConsoleBuild before its first build', () => {
  let packageFolder: string;

  beforeEach(() => {
    packageFolder = mkdtempSync(join(tmpdir(), 'tributary-console-package-'));
  });

  afterEach(() => rmSync(packageFolder, { recursive: true, force: true }));

  it('says a build is under way while its marker names a live process, and finds the build once it is there', async () => {
    const build = new ConsoleBuild(null, packageFolder);
    expect(build.directory).toBeNull();
    expect(build.building).toBe(false);
    writeFileSync(join(packageFolder, CONSOLE_BUILDING_MARKER), String(process.pid));
    expect(build.building).toBe(true);
    mkdirSync(join(packageFolder, 'dist'));
    writeFileSync(join(packageFolder, 'dist', 'index.html'), '<!doctype html>');
    expect(build.directory).toBe(join(packageFolder, 'dist'));
    expect((await build.read('workspaces/w1'))?.body.toString()).toBe('<!doctype html>');
  });

  it('does not take a marker left by a build that died for a build under way', () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid;
    writeFileSync(join(packageFolder, CONSOLE_BUILDING_MARKER), String(dead));
    expect(new ConsoleBuild(null, packageFolder).building).toBe(false);
  });
});
