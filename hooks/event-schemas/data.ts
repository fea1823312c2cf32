import { organizationResponse, organizationRoleResponse, organizationScopeResponse, roleResponse, scopeResponse } from '../../lib/shapes.js';
import { changeEvents, exceptionEvents, interactionEvents, interactionKinds, type ChangeKey } from '../catalog.js';
import { closed, eventApplication, eventUser, origin, string, stringList, type Schema } from './parts.js';

/** The events of people and data: a change to an entity, an interaction, an exception a person caused. */

const openEntity = (response: { properties: Record<string, unknown> }) => ({ type: 'object', properties: response.properties, required: ['id'] });

const entityData: Record<string, Schema> = {
  Role: openEntity(roleResponse),
  Scope: openEntity(scopeResponse),
  Organization: openEntity(organizationResponse),
  OrganizationRole: openEntity(organizationRoleResponse),
  OrganizationScope: openEntity(organizationScopeResponse),
};

/** A data event: what its change's rule carries, and the origin. */
export function dataEventSchema(event: string): Schema {
  const rules = Object.entries(changeEvents).filter(([, rule]) => rule.event === event);
  const [key, rule] = rules[0]!;
  const entity = (key as ChangeKey).split('.')[0]!;
  const carried: Record<string, unknown> = {};
  const required: string[] = [];
  if (rule.ownerKey) {
    carried[rule.ownerKey] = string;
    required.push(rule.ownerKey);
  }
  switch (rule.carries) {
    case 'user':
      carried.data = eventUser;
      carried.changes = { ...stringList, description: 'On an update: the fields it changed (`identities.<target>` for a linked identity).' };
      required.push('data');
      break;
    case 'scopes':
      carried.data = { type: 'array', items: openEntity(scopeResponse), description: "The role's permissions as they now are." };
      required.push('data');
      break;
    case 'organizationScopes':
      carried.data = { type: 'array', items: openEntity(organizationScopeResponse), description: "The organization role's permissions as they now are." };
      required.push('data');
      break;
    case 'memberRoles':
      carried.userId = string;
      carried.addedRoleIds = stringList;
      carried.removedRoleIds = stringList;
      required.push('userId');
      break;
    case 'delta':
      // Each only when not empty, as Logto's membership events; of every kind the event announces (users, applications).
      for (const [, each] of rules) {
        carried[`added${each.deltaOf ?? 'UserIds'}`] = stringList;
        carried[`removed${each.deltaOf ?? 'UserIds'}`] = stringList;
      }
      break;
    default:
      carried.data = entityData[entity] ?? { type: 'object', required: ['id'] };
      required.push('data');
  }
  return closed(event, { ...carried, ...origin }, required, `${entity}: a change made through the Management API, the Account API or a sign-in.`);
}

export const interactionSchema = (event: keyof typeof interactionEvents): Schema =>
  closed(
    event,
    {
      interactionEvent: { const: interactionEvents[event] },
      sessionId: string,
      userAgent: string,
      userIp: string,
      userId: string,
      user: eventUser,
      applicationId: string,
      application: eventApplication,
    },
    ['interactionEvent', 'userId'],
    `A ${interactionEvents[event]} interaction that ended with a sign-in.`,
  );

const exceptionFields: Record<(typeof exceptionEvents)[number], { properties: Record<string, unknown>; description: string }> = {
  'Identifier.Lockout': {
    properties: { type: string, value: { ...string, description: 'The identifier as typed.' } },
    description: 'An identifier locked after repeated failed attempts.',
  },
  'Message.RateLimited': {
    properties: { action: { const: 'VerificationCodeSend' }, recipient: string },
    description: 'A verification code send refused by a limit.',
  },
};

export const exceptionSchema = (event: (typeof exceptionEvents)[number]): Schema => {
  const { properties, description } = exceptionFields[event];
  const context = { interactionEvent: { enum: interactionKinds }, sessionId: string, applicationId: string, ip: string, userAgent: string };
  return closed(event, { ...properties, ...context }, Object.keys(properties), description);
};

// The hook's URL as scheme, host and path: its user information and query string stay in its configuration.
