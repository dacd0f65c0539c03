import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * The console is served by the Config API under `/console`; its only back end is `/v1beta`. Types
 * and the filter matcher come from the same libraries as the server's (`@tributary/*`), so the
 * console's view of the wire is the server's. JSX is compiled by Vite's own transformer (no
 * plugin), with React's automatic runtime.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  resolve: {
    alias: {
      '@tributary/contracts': `${repositoryRoot}libs/contracts/src`,
      '@tributary/routing': `${repositoryRoot}libs/routing/src`,
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
  },
  server: { proxy: { '/v1beta': 'http://127.0.0.1:8080' } },
});
