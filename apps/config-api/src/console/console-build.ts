import { existsSync, readFileSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface ConsoleFile {
  body: Buffer;
  contentType: string;
  /** Vite names built assets by their content hash, so they never change under one name. */
  immutable: boolean;
}

/**
 * Written into the console package's folder while `npm start` builds the console in the background
 * (`scripts/build-console.js`), holding the building process's id.
 */
export const CONSOLE_BUILDING_MARKER = '.building';

/**
 * The console's built files (`console/dist`, made by `npm run build:console`). Found by walking up
 * from this file, so the same code works from the TypeScript sources (tests) and from `dist/`. On a
 * first `npm start` the server answers before the console is built: until it is, the console's
 * folder is looked at again on each request, and `building` says whether a build is under way.
 */
export class ConsoleBuild {
  private found: string | null;

  constructor(
    directory: string | null,
    /** The console package's folder (`console/`), watched for a build that has not finished yet. */
    private readonly packageFolder: string | null = null,
  ) {
    this.found = directory;
  }

  static locate(): ConsoleBuild {
    let packageFolder: string | null = null;
    for (let directory = __dirname; ; directory = dirname(directory)) {
      const candidate = join(directory, 'console');
      if (existsSync(join(candidate, 'dist', 'index.html'))) return new ConsoleBuild(join(candidate, 'dist'));
      if (!packageFolder && existsSync(join(candidate, 'package.json'))) packageFolder = candidate;
      if (dirname(directory) === directory) return new ConsoleBuild(null, packageFolder);
    }
  }

  get directory(): string | null {
    if (!this.found && this.packageFolder && existsSync(join(this.packageFolder, 'dist', 'index.html'))) {
      this.found = join(this.packageFolder, 'dist');
    }
    return this.found;
  }

  /** True while a background build of the console runs (its marker names a live process). */
  get building(): boolean {
    if (!this.packageFolder) return false;
    let builder: number;
    try {
      builder = Number(readFileSync(join(this.packageFolder, CONSOLE_BUILDING_MARKER), 'utf8'));
    } catch {
      return false;
    }
    try {
      process.kill(builder, 0);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The file for a path under `/console/`, or index.html for a page of the single-page app; null for
   * a missing asset (a path with an extension) and for anything outside the build directory.
   */
  async read(relativePath: string): Promise<ConsoleFile | null> {
    if (!this.directory) return null;
    const wanted = relativePath.replace(/^\/+/, '');
    if (wanted !== '' && !wanted.includes('\0')) {
      const file = await this.fileInside(wanted);
      if (file) return file;
      if (extname(wanted) !== '') return null;
    }
    return this.fileInside('index.html');
  }

  private async fileInside(relativePath: string): Promise<ConsoleFile | null> {
    const root = this.found!;
    let path: string;
    try {
      path = await realpath(resolve(root, relativePath));
    } catch {
      return null;
    }
    // A path that climbs out (`..`, a symbolic link) is not the console's.
    if (path !== root && !path.startsWith(root + sep)) return null;
    try {
      const body = await readFile(path);
      return {
        body,
        contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
        immutable: relativePath.startsWith('assets/'),
      };
    } catch {
      return null;
    }
  }
}
