import { readFileSync } from 'node:fs';

/** This package's version, from its package.json (one level above `lib/`, in source and in `dist/`). */
function readVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'oidc-identity' && manifest.version) return manifest.version;
    } catch {
      // Not at this level; try the next.
    }
  }
  return '0.0.0';
}

export const packageVersion = readVersion();
