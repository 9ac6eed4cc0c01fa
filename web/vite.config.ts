import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The dashboard is served by sluice under /ui/ (index.html also at /).
// `npm run dev` proxies the API paths to a running sluice:
//   SLUICE_URL=http://localhost:8080 npm run dev
const target = process.env.SLUICE_URL ?? 'http://localhost:8080';

export default defineConfig({
  base: '/ui/',
  plugins: [
    react(),
    {
      // dist/.gitkeep is committed so that //go:embed all:dist always finds
      // the directory; the build empties dist, so it is written back.
      name: 'sluice-keep-dist',
      apply: 'build',
      closeBundle() {
        writeFileSync(fileURLToPath(new URL('./dist/.gitkeep', import.meta.url)), '');
      },
    },
  ],
  define: {
    __APP_VERSION__: JSON.stringify(process.env.npm_package_version ?? 'dev'),
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
  },
  server: {
    proxy: {
      '/admin': { target },
      '/v1': { target },
      '/healthz': { target },
    },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    // styles.test.ts reads styles.css as text (?raw), which Vitest would otherwise empty.
    css: { include: [/styles\.css/] },
  },
});
