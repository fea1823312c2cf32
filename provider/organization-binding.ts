import { interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

import { clientPolicies } from './client-policies.js';
import { bindGrant, boundOrganization, OrganizationRefusal, requestedOrganization, type OrganizationAccess } from './organization-access.js';

type GrantLoader = NonNullable<Configuration['loadExistingGrant']>;
type Client = NonNullable<KoaContextWithOIDC['oidc']['client']>;

/** The prompt (and the interaction result's key) of the organization chooser. */
export const organizationPrompt = 'organization';

/** What the chooser puts in the interaction's result: the organization, and whose choice it was. */
export interface OrganizationChoice {
  id: string;
  accountId: string;
}

/** The organization chosen in this authorization's chooser, if the account that chose it is the one signed in. */
function chosenOrganization(ctx: KoaContextWithOIDC, accountId: string | undefined): string | undefined {
  const choice = (ctx.oidc.result as Record<string, Partial<OrganizationChoice> | undefined> | undefined)?.[organizationPrompt];
  return typeof choice?.id === 'string' && choice.accountId === accountId ? choice.id : undefined;
}

const requiresOrganization = (client: Client | undefined) => client !== undefined && clientPolicies.requiresOrganization(client);

/**
 * oidc-provider's `loadExistingGrant`, binding the grant to the organization this authorization is
 * for (beyond Logto, logto#7485), checked as an organization token is (`ofUser`), before any code is
 * issued; tokens from the grant then carry it (`organizationOf`). Which organization:
 * - the one the request names (`organization_id`); a refusal is `access_denied`, to the redirect URI;
 * - else the one the user chose on the chooser page (`prompt=organization`, or asked because the
 *   application requires one), only for the account that chose it; a refusal is `access_denied` too
 *   (the membership changed since the choice);
 * - else, for an application that requires an organization, the one the grant is bound to already,
 *   while the user may still act in it (otherwise none, and the chooser asks again);
 * - else none.
 */
export function bindingOrganization(loader: GrantLoader, access: () => OrganizationAccess): GrantLoader {
  return async (ctx) => {
    const grant = await loader(ctx);
    if (!grant) return grant;
    const clientId = ctx.oidc.client!.clientId;
    const accountId = grant.accountId!;
    let organizationId = requestedOrganization(ctx) ?? chosenOrganization(ctx, accountId);
    if (organizationId !== undefined) {
      await access().ofUser(organizationId, clientId, accountId);
    } else if (requiresOrganization(ctx.oidc.client)) {
      organizationId = await stillAllowed(access(), boundOrganization(grant), clientId, accountId);
    }
    if (bindGrant(grant, organizationId)) await grant.save();
    return grant;
  };
}

/** `organizationId` if the user may still act in it there, else none; a failure that is not a refusal stays one. */
async function stillAllowed(access: OrganizationAccess, organizationId: string | undefined, clientId: string, accountId: string) {
  if (organizationId === undefined) return undefined;
  try {
    await access.ofUser(organizationId, clientId, accountId);
    return organizationId;
  } catch (error) {
    if (error instanceof OrganizationRefusal) return undefined;
    throw error;
  }
}

/**
 * The chooser's prompt, after consent: asked when the request says `prompt=organization`, or when
 * the application requires an organization (`customClientMetadata.requireOrganization`) and the
 * grant is bound to none. With `prompt=none` it answers `interaction_required`.
 */
export function organizationChooserPrompt() {
  const { Prompt, Check } = interactionPolicy;
  return new Prompt(
    { name: organizationPrompt, requestable: true },
    new Check('organization_required', 'the application requires an organization to be chosen', (ctx) => {
      const { oidc } = ctx;
      if (!requiresOrganization(oidc.client) || requestedOrganization(ctx) !== undefined) return Check.NO_NEED_TO_PROMPT;
      return boundOrganization(oidc.entities.Grant as Parameters<typeof boundOrganization>[0]) === undefined ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
    }),
  );
}

/** The host's interaction policy (or oidc-provider's own), with the chooser's prompt after the others; the host's is not changed. */
export function withOrganizationChooser(hostPolicy: readonly interactionPolicy.Prompt[] | undefined) {
  const policy = interactionPolicy.base();
  if (hostPolicy) policy.splice(0, policy.length, ...hostPolicy);
  policy.add(organizationChooserPrompt());
  return policy;
}
