import { coreEnvironment, type EnvironmentSpec } from '../../lib/config.js';
import { hookEnvironment } from '../../hooks/settings.js';
import { experienceEnvironment } from '../../experience/settings.js';
import { generatedBanner, table } from './markdown.js';

interface Rule {
  type?: string;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  description?: string;
}

/** What a setting admits, read off its JSON Schema. */
function admits(rule: Rule): string {
  if (rule.enum) return rule.enum.map((value) => `\`${String(value)}\``).join(', ');
  if (rule.type === 'boolean') return '`true`, `false`';
  if (rule.type === 'integer') return `integer, ${rule.minimum ?? '…'} to ${rule.maximum ?? '…'}`;
  if (rule.minLength !== undefined || rule.maxLength !== undefined) return `text, ${rule.minLength ?? 0} to ${rule.maxLength ?? '…'} characters`;
  return 'text';
}

const sections: Array<{ title: string; lead: string; spec: EnvironmentSpec }> = [
  { title: 'The server, its database, tokens and proxies', lead: 'The core settings (`lib/config.ts`).', spec: coreEnvironment },
  { title: 'Webhooks', lead: 'Delivery (`hooks/settings.ts`); embedding: `createIdentity({ hooks })`.', spec: hookEnvironment },
  {
    title: 'Sign-in pages, email and SMS',
    lead: 'Branding and the code connectors (`experience/settings.ts`); embedding: `createIdentity({ experience })`.',
    spec: experienceEnvironment,
  },
];

/** docs/configuration.md: every variable the standalone server reads, from the schemas that validate it. */
export function renderConfiguration(): string {
  const parts = [
    generatedBanner('the settings’ JSON Schemas (`lib/config.ts`, `hooks/settings.ts`, `experience/settings.ts`)'),
    '',
    '# Configuration',
    '',
    'The standalone server reads these variables from the environment and checks them at startup: a bad',
    'value stops it with one line naming the setting (`Invalid setting: PORT must be integer`). An empty',
    'value counts as unset. An embedding host passes the same settings as `createIdentity` options',
    '([embedding](embedding.md)), checked by the same rules.',
  ];
  for (const { title, lead, spec } of sections) {
    const rows = Object.entries(spec).map(([name, rule]) => {
      const { default: fallback, description = '' } = rule as Rule;
      // A setting without a schema default may say what its absence means, first: `Unset: <what>. <meaning>`.
      const [, absent, meaning = description] = /^Unset: (.*?)\. (.*)$/s.exec(description) ?? [];
      const shown = fallback !== undefined ? `\`${String(fallback)}\`` : (absent ?? 'unset');
      return [`\`${name}\``, shown, admits(rule as Rule), meaning];
    });
    parts.push('', `## ${title}`, '', lead, '', table(['Setting', 'Default', 'Admits', 'Meaning'], rows));
  }
  return `${parts.join('\n')}\n`;
}
