import { spawn } from 'node:child_process';

/**
 * What a start loads: the dependencies that only some deployments use (passkeys, SAML, SMTP,
 * outbound fetches, phone numbers) are loaded at their first use, not by importing the package.
 * They were two fifths of what importing it took (BENCHMARKS.md, "What a start loads").
 */
describe('importing the package', () => {
  it('loads none of SimpleWebAuthn (and its ASN.1 parsers), node-saml, nodemailer, undici or libphonenumber-js', async () => {
    const script = `
      import { createRequire } from 'node:module';
      await import(${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)});
      const loaded = Object.keys(createRequire(import.meta.url).cache).map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1]);
      process.stdout.write(JSON.stringify([...new Set(loaded.filter(Boolean))]));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    const packages = JSON.parse(output) as string[];
    // The probe sees CommonJS packages; these are loaded at start on purpose.
    expect(packages).toEqual(expect.arrayContaining(['mongodb']));
    const optional = packages.filter((name) => /^(@simplewebauthn\/|@peculiar\/|@node-saml\/|nodemailer$|undici$|libphonenumber-js$)/.test(name));
    expect(optional).toEqual([]);
  });
});
