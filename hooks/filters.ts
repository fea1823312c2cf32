import type { HookDocument, HookEventDocument } from './models.js';

/**
 * Whether `hook` wants `event`: it subscribes to the event's name, the event comes from one of
 * the hook's `sources` (when it names any), and no application in its `excludeClientIds` caused
 * it (echo suppression: a backend does not receive back its own writes), and it is not about the
 * hook itself (`Hook.Disabled` and the like go to the other hooks). Fan-out, replays and
 * each attempt ask, so that a hook's filters as they are now decide.
 */
export function hookWants(
  hook: Pick<HookDocument, '_id' | 'events' | 'config'>,
  event: Pick<HookEventDocument, 'event' | 'source' | 'clientId' | 'entityKey'>,
): boolean {
  if (!hook.events.includes(event.event)) return false;
  // A hook's own operational events go to the others: its endpoint is the one failing.
  if (event.entityKey === `Hook:${hook._id}`) return false;
  const { sources, excludeClientIds } = hook.config;
  if (sources && event.source && event.source !== 'system' && !sources.includes(event.source)) return false;
  if (excludeClientIds && event.clientId && excludeClientIds.includes(event.clientId)) return false;
  return true;
}
