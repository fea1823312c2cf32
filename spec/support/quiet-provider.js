// Once in each test worker, before its first file: oidc-provider 9 warns at import that Node 20 is
// not its supported runtime (README: Node 20.19 works; 22 LTS is recommended), and the upstream
// identity providers the tests start (`spec/support/upstream.ts`, stand-ins for Google or an
// enterprise IdP) keep their state in oidc-provider's development store, which it warns about;
// samlify notes that the test SAML IdP (`spec/support/saml-idp.ts`) offers no single logout; the
// suites that turn oidc-provider's development login on, on purpose, hear oidc-provider say so.
// None says anything about the service.
const quiet = [
  'oidc-provider WARNING: Unsupported runtime',
  'oidc-provider WARNING: a quick start development-only in-memory adapter',
  'Construct identity  provider - missing endpoint of SingleLogoutService',
  'oidc-provider WARNING: a quick start development-only feature devInteractions is enabled',
];
const warn = console.warn.bind(console);
console.warn = (...args) => {
  if (typeof args[0] === 'string' && quiet.some((start) => args[0].startsWith(start))) return;
  warn(...args);
};
