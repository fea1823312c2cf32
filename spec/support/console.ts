import { generate } from 'otplib';

import { consoleBuiltIn } from '../../console/built-in.js';
import { TestBrowser, csrfOf } from './browser.js';
import type { TestServer } from './server.js';

/** The password every console test person has. */
export const consolePassword = 'console_password_5318';

/** A TOTP code at an offset from now: a sign-in spends a code, so each sign-in of one user takes another window's. */
export const totpAt = (secret: string, offsetMs = 0) => generate({ secret, epoch: Math.floor((Date.now() + offsetMs) / 1000) });

/**
 * People and sign-ins for the console's HTTP tests, on a server whose sign-in settings offer TOTP:
 * a user with the console role and a TOTP factor (or without either), and a browser signed in to
 * the console through the pages.
 */
export function consoleHelpers(server: TestServer) {
  /** A user with a password, optionally the console role and a TOTP factor (answers its secret). */
  async function person(username: string, { role = true, factor = true } = {}) {
    const user = await server.create('/api/users', { username, password: consolePassword });
    if (role) await server.create(`/api/users/${user.id}/roles`, { roleIds: [consoleBuiltIn.roleId] });
    const secret = factor ? ((await server.create(`/api/users/${user.id}/mfa-verifications`, { type: 'Totp' })).secret as string) : undefined;
    return { id: user.id as string, username, secret };
  }

  /**
   * Opens the console in a fresh browser and signs in through the pages (password, then the TOTP
   * challenge when the user has a factor). Answers the browser and the last page with its URL.
   */
  async function signIn(who: { username: string; secret?: string | undefined }, { offsetMs = 0, stopAtCallback = false } = {}) {
    const browser = new TestBrowser(server.url);
    const callback = `${server.url}/console/callback`;
    const stop = stopAtCallback ? callback : `${server.url}/never`;
    const start = await browser.follow('/console/users', stop);
    if (!/^\/interaction\/[^/]+$/.test(start.url.pathname)) throw new Error(`the console did not lead to a sign-in: ${start.url.pathname}`);
    const page = start.url.pathname;
    const signedIn = await browser.form(`${page}/sign-in`, { csrf: csrfOf(await start.response.text()), identifier: who.username, password: consolePassword });
    if (signedIn.status !== 303) throw new Error(`the sign-in answered ${signedIn.status}`);
    let landed = await browser.follow(signedIn.headers.get('location')!, stop);
    if (who.secret && landed.url.pathname === `${page}/mfa`) {
      const proved = await browser.form(`${page}/mfa/totp`, { csrf: csrfOf(await landed.response.text()), code: await totpAt(who.secret, offsetMs) });
      if (proved.status !== 303) throw new Error(`the TOTP challenge answered ${proved.status}`);
      landed = await browser.follow(proved.headers.get('location')!, stop);
    }
    return { browser, ...landed };
  }

  /** An administrator signed in to the console: the browser, and a form poster that takes the CSRF token from a page. */
  async function administrator(username: string) {
    const admin = await person(username);
    const { browser } = await signIn(admin);
    /** Posts a form of the page at `from` (its CSRF token) to `to`; fields may repeat (arrays). */
    const submit = async (from: string, to: string, fields: Record<string, string | string[]> = {}) => {
      const csrf = csrfOf(await (await browser.go(from)).text());
      const body = new URLSearchParams({ csrf });
      for (const [name, value] of Object.entries(fields)) for (const item of [value].flat()) body.append(name, item);
      return browser.go(to, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
    };
    return { ...admin, browser, submit };
  }

  return { person, signIn, administrator };
}
