import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** One file of the `@segment/analytics-next` package as served: its bytes, its gzip twin, its tag. */
export interface AnalyticsNextAsset {
  body: Buffer;
  /** The package's own `.gz` twin, when it ships one. */
  gzipped?: Buffer;
  /** Strong ETag of the uncompressed bytes (the gzip twin is a representation of the same). */
  etag: string;
}

/**
 * The lazy chunks analytics.js loads from `<cdn>/analytics-next/bundles/`: webpack names them
 * `<name>.bundle.<20-hex content hash>.js`, with source maps beside them. Nothing else of the package
 * directory is reachable through that route.
 */
const BUNDLE_FILE = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.bundle\.[0-9a-f]{20}\.js(\.map)?$/;

/** The loader file under `/analytics.js/v1/<writeKey>/`: the snippet asks for `analytics.min.js`;
 *  `analytics.js` is the unminified name some older snippets use. */
const LOADER_FILE = /^analytics(\.min)?\.js$/;

/**
 * The browser library's files, served unmodified from the pinned npm package (docs/browser-mobile.md
 * §1c): `dist/umd/standalone.js` is what Segment's CDN serves as `analytics.min.js`, and the chunk
 * files are what it serves under `analytics-next/bundles/`. Each file is read once, on first request,
 * and kept in memory (the whole directory is a few megabytes); an upgrade of the package is a
 * redeploy. Only names the directory lists are read or kept: a request for a name the package lacks
 * leaves nothing behind, so anyone asking for endless made-up names cannot grow the memory.
 */
@Injectable()
export class AnalyticsNextAssets {
  private readonly directory = join(
    dirname(require.resolve('@segment/analytics-next/package.json')),
    'dist',
    'umd',
  );
  private readonly files = new Map<string, Promise<AnalyticsNextAsset | undefined>>();
  private listing: Promise<Set<string>> | undefined;

  /** `analytics.min.js` (or `analytics.js`): the standalone bundle; undefined for any other name. */
  loader(fileName: string): Promise<AnalyticsNextAsset | undefined> {
    return LOADER_FILE.test(fileName) ? this.file('standalone.js') : Promise.resolve(undefined);
  }

  /** A lazy chunk or its source map; undefined for any other name or a chunk the package lacks. */
  bundle(fileName: string): Promise<AnalyticsNextAsset | undefined> {
    return BUNDLE_FILE.test(fileName) ? this.file(fileName) : Promise.resolve(undefined);
  }

  private async file(fileName: string): Promise<AnalyticsNextAsset | undefined> {
    let loading = this.files.get(fileName);
    if (!loading) {
      if (!(await this.listedNames()).has(fileName)) return undefined;
      loading = this.files.get(fileName) ?? this.read(fileName);
      this.files.set(fileName, loading);
    }
    return loading;
  }

  /** The package directory's file names, listed once: the package is pinned, so it never changes. */
  private listedNames(): Promise<Set<string>> {
    this.listing ??= readdir(this.directory).then(
      (names) => new Set(names),
      () => new Set<string>(),
    );
    return this.listing;
  }

  private async read(fileName: string): Promise<AnalyticsNextAsset | undefined> {
    const path = join(this.directory, fileName);
    const body = await readFile(path).catch(() => undefined);
    if (!body) return undefined;
    const gzipped = await readFile(`${path}.gz`).catch(() => undefined);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    return { body, gzipped, etag };
  }
}
