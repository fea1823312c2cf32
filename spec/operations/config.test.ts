import { resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { createIdentity } from '../../identity.js';
import { defaultHookSettings } from '../../hooks/settings.js';
import { silentLogger } from '../../lib/logger.js';
import { openDatabase } from '../../lib/store/database.js';
import { ConfigError, loadSettings } from '../../settings.js';
import { testMongoUri, uniqueDbName } from '../support/env.js';
import { startTestServer } from '../support/server.js';

describe('settings', () => {
  it('has defaults for everything', () => {
    expect(loadSettings({})).toEqual({
      port: 3001,
      baseUrl: undefined,
      mongodbUri: undefined,
      dataDir: resolve('.oidc-identity'),
      dataSnapshotMs: 2000,
      databaseTimeouts: { serverSelectionTimeoutMs: 5000, socketTimeoutMs: 10000 },
      databaseConcerns: { w: 'majority', readConcernLevel: 'majority' },
      accessTokenAlg: 'ES256',
      bootstrapClientId: undefined,
      bootstrapClientSecret: undefined,
      consolePath: '/console',
      consoleAdministrator: undefined,
      apiBodyLimit: 102400,
      cacheRefreshMs: 1000,
      shutdownGraceMs: 10000,
      httpKeepAliveMs: 5000,
      trustProxy: { hops: 0 },
      subjectTokenTtl: 600,
      passwordHashing: { N: 32768, r: 8, p: 3 },
      impersonationAudit: { checkpointMs: 300_000, pollMs: 1000, settleMs: 2000 },
      log: { level: 'info', format: 'json' },
      metricsToken: undefined,
      managementApiTokenTtl: 600,
      customClaimsOnError: 'omit',
      customClaimsTimeoutMs: 1000,
      outboundAllowedHosts: [],
      changesRetentionDays: 90,
      sweepIntervalMs: 60000,
      changeStreams: true,
      ssoPublicEmailDomains: undefined,
      hooks: {
        allowedHosts: [],
        deliver: true,
        timeoutMs: 10000,
        retrySchedule: [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
        disableAfter: 432000,
        keyOverlap: 86400,
        pollMs: 1000,
        concurrency: 16,
        concurrencyPerHook: 4,
        retentionDays: 30,
        optInRetentionHours: 24,
      },
      experience: { productName: 'oidc-identity', logoUrl: undefined, primaryColor: '#3451b2', smtpUrl: undefined, emailFrom: undefined, sms: { kind: 'log' } },
    });
    // An embedding host gets the same defaults.
    expect(loadSettings({}).hooks).toEqual(defaultHookSettings);
  });

  it('gives the driver majority write and read concerns by default, and the ones MONGODB_WRITE_CONCERN and MONGODB_READ_CONCERN say', async () => {
    expect(loadSettings({ MONGODB_WRITE_CONCERN: '1', MONGODB_READ_CONCERN: 'local' }).databaseConcerns).toEqual({ w: 1, readConcernLevel: 'local' });
    expect(() => loadSettings({ MONGODB_WRITE_CONCERN: '2' })).toThrow(
      new ConfigError('Invalid setting: MONGODB_WRITE_CONCERN must be equal to one of the allowed values (one of majority, 1)'),
    );
    const server = await startTestServer('concerns');
    try {
      expect(server.database.client.writeConcern?.w).toBe('majority');
      expect(server.database.client.readConcern?.level).toBe('majority');
    } finally {
      await server.close();
    }
  });

  it('reads where the console is: /console unless CONSOLE_PATH says, off with `off`, and nothing else', () => {
    expect(loadSettings({}).consolePath).toBe('/console');
    expect(loadSettings({ CONSOLE_PATH: '/admin/console' }).consolePath).toBe('/admin/console');
    expect(loadSettings({ CONSOLE_PATH: 'off' }).consolePath).toBe(false);
    for (const bad of ['console', '/Console', '/console/', 'https://x/console']) expect(() => loadSettings({ CONSOLE_PATH: bad })).toThrow(ConfigError);
    expect(() => loadSettings({ CONSOLE_ADMIN_USERNAME: 'not a name' })).toThrow(ConfigError);
  });

  it('refuses a console path that is ours or the provider’s', async () => {
    const database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('console-path') });
    try {
      for (const path of ['/api', '/interaction', '/oidc/console'])
        await expect(
          createIdentity({
            database,
            issuer: 'http://localhost:1/oidc',
            baseUrl: 'http://localhost:1',
            logger: silentLogger,
            experience: {},
            console: { path },
          }),
        ).rejects.toThrow(/console\.path/);
    } finally {
      await database.close();
    }
  });

  it('reads the webhook settings', () => {
    expect(
      loadSettings({
        HOOKS_ALLOWED_HOSTS: '127.0.0.1, localhost,10.0.0.0/8,fd00::/8',
        HOOKS_DELIVERY: 'false',
        HOOKS_RETRY_SCHEDULE: '0,1,60',
        HOOKS_CONCURRENCY_PER_HOOK: '2',
      }).hooks,
    ).toMatchObject({ allowedHosts: ['127.0.0.1', 'localhost', '10.0.0.0/8', 'fd00::/8'], deliver: false, retrySchedule: [0, 1, 60], concurrencyPerHook: 2 });
  });

  it('reads the sign-in experience settings', () => {
    expect(
      loadSettings({
        BRAND_NAME: 'Acme',
        BRAND_LOGO_URL: 'https://acme.test/logo.svg',
        BRAND_COLOR: '#0B6E4F',
        SMTP_URL: 'smtps://user:pass@mail.acme.test:465',
        EMAIL_FROM: 'Acme <no-reply@acme.test>',
      }).experience,
    ).toEqual({
      productName: 'Acme',
      logoUrl: 'https://acme.test/logo.svg',
      primaryColor: '#0B6E4F',
      smtpUrl: 'smtps://user:pass@mail.acme.test:465',
      emailFrom: 'Acme <no-reply@acme.test>',
      sms: { kind: 'log' },
    });
  });

  it('reads and converts the environment', () => {
    expect(
      loadSettings({
        PORT: '8080',
        BASE_URL: 'https://id.example.com/',
        MONGODB_URI: 'mongodb://db:27017/id',
        ACCESS_TOKEN_ALG: 'EdDSA',
        TRUST_PROXY: 'true',
      }),
    ).toMatchObject({ port: 8080, baseUrl: 'https://id.example.com', mongodbUri: 'mongodb://db:27017/id', accessTokenAlg: 'EdDSA', trustProxy: { hops: 1 } });
    expect(loadSettings({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadSettings({ TRUST_PROXY: '10.0.0.0/8, 2001:db8::1' }).trustProxy).toEqual({ proxies: ['10.0.0.0/8', '2001:db8::1'] });
    expect(loadSettings({ MANAGEMENT_API_TOKEN_TTL: '120' }).managementApiTokenTtl).toBe(120);
    // Domains in the form they are compared in (IDNA's ASCII form, lower case).
    expect(loadSettings({ SSO_PUBLIC_EMAIL_DOMAINS: 'Corp-Mail.example, Bücher.example' }).ssoPublicEmailDomains).toEqual([
      'corp-mail.example',
      'xn--bcher-kva.example',
    ]);
  });

  it.each([
    [{ PORT: 'eighty' }, 'Invalid setting: PORT must be integer'],
    [{ PORT: '70000' }, 'Invalid setting: PORT must be <= 65535'],
    [{ BASE_URL: 'id.example.com' }, 'Invalid setting: BASE_URL must match pattern "^https?://[^/?#]+(/[^?#]*)?$"'],
    [{ MONGODB_URI: 'postgres://x' }, 'Invalid setting: MONGODB_URI must match pattern "^mongodb(\\+srv)?://"'],
    [{ ACCESS_TOKEN_ALG: 'HS256' }, 'Invalid setting: ACCESS_TOKEN_ALG must be equal to one of the allowed values (one of ES256, EdDSA, RS256)'],
    [{ BOOTSTRAP_CLIENT_ID: 'admin' }, 'Invalid setting: BOOTSTRAP_CLIENT_SECRET must be set together with BOOTSTRAP_CLIENT_ID'],
    [{ BOOTSTRAP_CLIENT_ID: 'admin', BOOTSTRAP_CLIENT_SECRET: 'short' }, 'Invalid setting: BOOTSTRAP_CLIENT_SECRET must NOT have fewer than 16 characters'],
    [{ HOOKS_ALLOWED_HOSTS: '10.0.0.0/33' }, 'Invalid setting: HOOKS_ALLOWED_HOSTS: `10.0.0.0/33` has a bad prefix length'],
    [{ HOOKS_ALLOWED_HOSTS: 'intranet/8' }, 'Invalid setting: HOOKS_ALLOWED_HOSTS: `intranet/8` is neither a host name nor a CIDR range'],
    [{ OUTBOUND_ALLOWED_HOSTS: '10.0.0.0/33' }, 'Invalid setting: OUTBOUND_ALLOWED_HOSTS: `10.0.0.0/33` has a bad prefix length'],
    [{ BRAND_LOGO_URL: 'https://cdn.example%3Bsandbox/logo.png' }, 'Invalid setting: BRAND_LOGO_URL must match format "web-url"'],
    [{ BRAND_COLOR: 'red' }, 'Invalid setting: BRAND_COLOR must match pattern "^#[0-9A-Fa-f]{6}$"'],
    [{ SMTP_URL: 'smtp://mail.acme.test' }, 'Invalid setting: EMAIL_FROM must be set together with SMTP_URL'],
    [{ TRUST_PROXY: 'proxy.internal' }, 'Invalid setting: TRUST_PROXY: `proxy.internal` is not an IP address or CIDR range'],
    [{ TRUST_PROXY: '10.0.0.0/40' }, 'Invalid setting: TRUST_PROXY: `10.0.0.0/40` has a bad prefix length'],
    [{ TRUST_PROXY: '11' }, 'Invalid setting: TRUST_PROXY counts at most 10 proxies'],
    [{ MANAGEMENT_API_TOKEN_TTL: '5' }, 'Invalid setting: MANAGEMENT_API_TOKEN_TTL must be >= 30'],
    [{ SHUTDOWN_GRACE_MS: '-1' }, 'Invalid setting: SHUTDOWN_GRACE_MS must be >= 0'],
    [{ MONGODB_SOCKET_TIMEOUT_MS: '0' }, 'Invalid setting: MONGODB_SOCKET_TIMEOUT_MS must be >= 100'],
    [{ MONGODB_SERVER_SELECTION_TIMEOUT_MS: 'soon' }, 'Invalid setting: MONGODB_SERVER_SELECTION_TIMEOUT_MS must be integer'],
    [{ HOOKS_CONCURRENCY_PER_HOOK: '0' }, 'Invalid setting: HOOKS_CONCURRENCY_PER_HOOK must be >= 1'],
    [{ LOG_LEVEL: 'loud' }, 'Invalid setting: LOG_LEVEL must be equal to one of the allowed values (one of trace, debug, info, warn, error, fatal, silent)'],
    [{ METRICS_TOKEN: 'short' }, 'Invalid setting: METRICS_TOKEN must NOT have fewer than 16 characters'],
    [{ LOG_FORMAT: 'xml' }, 'Invalid setting: LOG_FORMAT must be equal to one of the allowed values (one of json, pretty)'],
    [{ IMPERSONATION_LEDGER_POLL_MS: '1' }, 'Invalid setting: IMPERSONATION_LEDGER_POLL_MS must be >= 50'],
    [
      { SSO_PUBLIC_EMAIL_DOMAINS: 'mail.example,not a domain' },
      'Invalid setting: SSO_PUBLIC_EMAIL_DOMAINS must match pattern "^\\s*[^\\s,]+(\\s*,\\s*[^\\s,]+)*\\s*$"',
    ],
    [{ SSO_PUBLIC_EMAIL_DOMAINS: 'mail.example,10.0.0.1' }, 'Invalid setting: SSO_PUBLIC_EMAIL_DOMAINS: `10.0.0.1` is not a domain name'],
    [{ HOOKS_RETRY_SCHEDULE: '0,5s' }, 'Invalid setting: HOOKS_RETRY_SCHEDULE must match pattern "^\\d{1,6}(,\\d{1,6}){0,19}$"'],
  ])('refuses %j with one line naming the setting', (env, message) => {
    expect(() => loadSettings(env)).toThrow(new ConfigError(message));
  });

  it("stops `npm start`'s server with that one line and exit code 1", async () => {
    const run = promisify(execFile)(process.execPath, ['dist/server.js'], { env: { ...process.env, PORT: 'eighty' } });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: 'Invalid setting: PORT must be integer\n' });
  });

  describe("an embedding host's options are checked with the same rules as the environment", () => {
    it.each([
      [
        { experience: { branding: { primaryColor: 'red; } body { display: none' } } },
        'Invalid option: experience.branding.primaryColor must match pattern "^#[0-9A-Fa-f]{6}$"',
      ],
      [
        { experience: { branding: { logoUrl: 'javascript:alert(1)' } } },
        'Invalid option: experience.branding.logoUrl must match pattern "^https?://[^\\s"\'<>]+$"',
      ],
      [{ experience: { branding: { productName: '' } } }, 'Invalid option: experience.branding.productName must NOT have fewer than 1 characters'],
      [{ hooks: { timeoutMs: 5 } }, 'Invalid option: hooks.timeoutMs must be >= 100'],
      [{ hooks: { retrySchedule: [] } }, 'Invalid option: hooks.retrySchedule must NOT have fewer than 1 items'],
      [{ hooks: { allowedHosts: ['intranet/8'] } }, 'Invalid setting: hooks.allowedHosts: `intranet/8` is neither a host name nor a CIDR range'],
    ])('createIdentity refuses %j with one line naming the option', async (options, message) => {
      const database = await openDatabase(testMongoUri(), { dbName: uniqueDbName('options') });
      try {
        await expect(
          createIdentity({ database, issuer: 'http://localhost:1/oidc', baseUrl: 'http://localhost:1', logger: silentLogger, ...options }),
        ).rejects.toThrow(new ConfigError(message));
      } finally {
        await database.close();
      }
    });
  });
});
