import { defineConfig } from 'vite';

// base './' keeps the built index.html working whether the server serves it
// at '/' or under a prefix; assets go to dist/assets/ with hashed names.
export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npm run dev`: proxy the API to a running `model-inspector open` (MI_SERVER=http://127.0.0.1:PORT).
    proxy: process.env.MI_SERVER ? { '/api': process.env.MI_SERVER } : undefined,
  },
});
