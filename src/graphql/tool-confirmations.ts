// The tool calls a session waits on: the `pendingToolConfirmations` field of Session (the
// agent.tool_use events marked awaiting_confirmation that have no answer yet). Answers go
// through sendSessionEvents with a `userToolConfirmation` event, as on REST.
import { builder } from './builder.js';
import { SessionType } from './sessions.js';
import { objectOf } from './graphql-types.js';
import { sessionEvent } from '../events/types.js';
import { awaitingConfirmation } from '../tools/confirmations.js';

const toolUse = sessionEvent.options.find((o) => o.shape.type.value === 'agent.tool_use')!;
const ToolUseEventType = objectOf(toolUse);

builder.objectField(SessionType, 'pendingToolConfirmations', (t) =>
  t.field({
    type: [ToolUseEventType],
    description: 'Tool calls waiting for a user.tool_confirmation, oldest first (empty when none)',
    resolve: (session) => awaitingConfirmation(session.id),
  }),
);
