import { generateId } from '../lib/ids.js';
import { interactionEvents, type InteractionEvent } from './catalog.js';

/**
 * The body of a test delivery (`POST /api/hooks/:id/test`): the event's shape with sample values,
 * and `sample: true` so that a receiver can tell it from a real one.
 */
export function samplePayload(event: string, now = new Date()): { id: string; payload: Record<string, unknown> } {
  const id = generateId();
  const common = { id, event, createdAt: now.toISOString(), sample: true };
  if (Object.hasOwn(interactionEvents, event)) {
    return {
      id,
      payload: {
        ...common,
        interactionEvent: interactionEvents[event as InteractionEvent],
        sessionId: 'sample-session',
        userAgent: 'sample-agent',
        userIp: '203.0.113.7',
        userId: 'sample-user',
        user: { id: 'sample-user', username: 'sample', primaryEmail: 'sample@example.com' },
        applicationId: 'sample-application',
        application: { id: 'sample-application', type: 'Traditional', name: 'Sample application', description: null },
      },
    };
  }
  const entity = event.split('.')[0];
  return {
    id,
    payload: {
      ...common,
      data: { id: `sample-${entity.toLowerCase()}` },
      method: 'POST',
      path: '/api/hooks/sample/test',
      status: 200,
      params: {},
    },
  };
}
