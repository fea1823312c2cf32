import type { Db } from 'mongodb';

import { isDuplicateKeyError } from '../lib/errors.js';
import { generateSecret } from '../lib/ids.js';
import { createLinks } from '../lib/store/links.js';
import { signInSettingsStore } from '../sign-in/settings.js';
import { newUser, type ApplicationDocument, type UserDocument } from '../lib/store/models.js';
import { builtIn, ensureBuiltInRole, ensureBuiltInScope, upsertRetrying } from '../management/bootstrap.js';

/** What the console is made of in every deployment, under fixed ids so that concurrent starts converge on one copy. */
export const consoleBuiltIn = {
  /** The first-party application the console signs administrators in as. */
  applicationId: builtIn.consoleApplicationId,
  /** The console permission, a scope of the Management API resource. */
  scopeId: builtIn.consoleScopeId,
  /** The user role that holds it. */
  roleId: builtIn.consoleRoleId,
} as const;

/** The console permission's name: a user holds it through a user role, and only then enters. */
export const consoleScope = 'console';

/** Where the console lives under the service's origin, and its two fixed addresses. */
export interface ConsolePaths {
  /** `/console` unless the host mounts it elsewhere. */
  base: string;
  /** The redirect URI of the console's application: `${origin}${base}/callback`. */
  callback: string;
  /** Where a sign-out ends: `${origin}${base}`. */
  home: string;
}

export const consolePathsOf = (origin: string, base: string): ConsolePaths => ({ base, callback: `${origin}${base}/callback`, home: `${origin}${base}` });

/**
 * The console permission (a scope of the Management API), the user role that holds it, and the
 * console's application, whose redirect URIs follow the base URL at every start. The application
 * has no secret: its codes are redeemed only by the console, in process, never at the token endpoint.
 */
export async function ensureConsole(db: Db, paths: ConsolePaths): Promise<void> {
  await ensureBuiltInScope(db, consoleBuiltIn.scopeId, consoleScope, 'Enter the admin console (held by users through a role)');
  await ensureBuiltInRole(db, consoleBuiltIn.roleId, {
    name: 'Console administrator',
    description: 'Enters the admin console, and through it manages the whole service',
    type: 'User',
  });
  await upsertRetrying(() => createLinks(db, 'roles_scopes').add(consoleBuiltIn.roleId, [consoleBuiltIn.scopeId]));
  const metadata: ApplicationDocument['oidcClientMetadata'] = { redirectUris: [paths.callback], postLogoutRedirectUris: [paths.home] };
  await upsertRetrying(() =>
    db.collection<ApplicationDocument>('applications').updateOne(
      { _id: consoleBuiltIn.applicationId },
      {
        $set: { oidcClientMetadata: metadata, type: 'Traditional', isThirdParty: false },
        $setOnInsert: {
          name: 'Admin console',
          description: 'Built in: the admin console signs administrators in as this application',
          customClientMetadata: { allowTokenExchange: false },
          customData: {},
          createdAt: Date.now(),
        },
      },
      { upsert: true },
    ),
  );
}

/** The first administrator a start made: to print once, as the first machine-to-machine credentials are. */
export interface FirstAdministrator {
  username: string;
  password: string;
  /** Whether this start turned on authenticator apps as a second factor (none was offered), so that the administrator can enrol one. */
  offeredTotp?: boolean;
}

/**
 * On a deployment where no user holds the console role, makes one: `username` with a random
 * password, holding the role. Only one of several processes starting at once makes it. Answers
 * undefined when someone holds the role already, or when `username` is taken by a user who does
 * not (that user is not changed: give them the role through the Management API).
 */
export async function ensureFirstAdministrator(
  db: Db,
  { username, hashPassword }: { username: string; hashPassword(password: string): Promise<string> },
): Promise<FirstAdministrator | undefined> {
  const holders = createLinks(db, 'users_roles');
  if ((await holders.leftsOf(consoleBuiltIn.roleId)).length > 0) return undefined;
  if (await db.collection<UserDocument>('users').findOne({ username }, { projection: { _id: 1 } })) return undefined;
  try {
    await db.collection<{ _id: string; at: Date }>('system').insertOne({ _id: 'console-administrator', at: new Date() });
  } catch (error) {
    if (isDuplicateKeyError(error)) return undefined;
    throw error;
  }
  const password = generateSecret();
  const user = newUser({ username, passwordHash: await hashPassword(password) });
  await db.collection<UserDocument>('users').insertOne(user);
  await holders.add(user._id, [consoleBuiltIn.roleId]);
  // The console asks for a second factor, and it can only be enrolled where one is offered. Where
  // none is, an authenticator app is offered, under a policy that asks nobody else to enrol one.
  const settings = signInSettingsStore(db);
  const current = await settings.load();
  const offered = current.mfa.factors.length === 0;
  if (offered) await settings.save({ ...current, mfa: { ...current.mfa, factors: ['Totp'], policy: 'NoPrompt' } });
  return { username, password, ...(offered && { offeredTotp: true }) };
}
