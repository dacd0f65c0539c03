import { existsSync } from 'node:fs';
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
 * The console's built files (`console/dist`, made by `npm run build:console`). Found by walking up
 * from this file, so the same code works from the TypeScript sources (tests) and from `dist/`.
 */
export class ConsoleBuild {
  constructor(readonly directory: string | null) {}

  static locate(): ConsoleBuild {
    for (let directory = __dirname; ; directory = dirname(directory)) {
      const candidate = join(directory, 'console', 'dist');
      if (existsSync(join(candidate, 'index.html'))) return new ConsoleBuild(candidate);
      if (dirname(directory) === directory) return new ConsoleBuild(null);
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
    const root = this.directory!;
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
