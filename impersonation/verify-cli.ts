/**
 * `npm run audit:verify`: checks the impersonation audit offline (`verifyImpersonationAudit`).
 *
 *   npm run audit:verify -- --url http://localhost:3001 --token <Management API token>
 *       reads every record, every checkpoint and the JWKS from a running server (`IDENTITY_URL`
 *       and `MANAGEMENT_TOKEN` work too), then verifies them here; `--save <folder>` keeps what it read.
 *   npm run audit:verify -- --records records.json --checkpoints checkpoints.json --jwks jwks.json
 *       verifies an export, with no server.
 *
 * Exit code 0 when the audit is intact, 1 when anything is wrong (each problem printed), 2 on bad use.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import type { JSONWebKeySet } from 'jose';

import { verifyImpersonationAudit, type AuditRecord } from './verify.js';

async function pages<T>(url: string, token: string): Promise<T[]> {
  const all: T[] = [];
  for (let page = 1; ; page += 1) {
    const response = await fetch(`${url}${url.includes('?') ? '&' : '?'}page=${page}&page_size=100`, { headers: { authorization: `Bearer ${token}` } });
    if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
    const found = (await response.json()) as T[];
    all.push(...found);
    if (found.length < 100) return all;
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      records: { type: 'string' },
      checkpoints: { type: 'string' },
      jwks: { type: 'string' },
      save: { type: 'string' },
    },
  });
  const url = (values.url ?? process.env.IDENTITY_URL)?.replace(/\/+$/, '');
  const token = values.token ?? process.env.MANAGEMENT_TOKEN;
  let records: AuditRecord[];
  let checkpoints: Array<{ jws: string }>;
  let jwks: JSONWebKeySet;
  if (values.records && values.checkpoints && values.jwks) {
    const read = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;
    [records, checkpoints, jwks] = [read(values.records), read(values.checkpoints), read(values.jwks)];
  } else if (url && token) {
    records = await pages<AuditRecord>(`${url}/api/impersonations`, token);
    checkpoints = await pages<{ jws: string }>(`${url}/api/impersonations/checkpoints`, token);
    const discovery = (await (await fetch(`${url}/oidc/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
    jwks = (await (await fetch(discovery.jwks_uri)).json()) as JSONWebKeySet;
    if (values.save) {
      mkdirSync(values.save, { recursive: true });
      writeFileSync(join(values.save, 'records.json'), JSON.stringify(records, null, 2));
      writeFileSync(join(values.save, 'checkpoints.json'), JSON.stringify(checkpoints, null, 2));
      writeFileSync(join(values.save, 'jwks.json'), JSON.stringify(jwks, null, 2));
    }
  } else {
    console.error('Give --url and --token (or IDENTITY_URL and MANAGEMENT_TOKEN), or --records, --checkpoints and --jwks.');
    process.exit(2);
  }
  const result = await verifyImpersonationAudit(records, checkpoints, jwks);
  for (const problem of result.problems) console.log(`PROBLEM: ${problem}`);
  console.log(
    `${result.ok ? 'intact' : 'NOT INTACT'}: ${result.checked} chained records checked, ${result.unchained} not chained yet, checkpoints vouch up to sequence ${result.checkpointed}`,
  );
  process.exit(result.ok ? 0 : 1);
}

await main();
