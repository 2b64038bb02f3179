// Imports every domain's types and fields, then builds the schema.
import { builder } from './builder.js';
import './identity.js';
import './agents.js';
import './sessions.js';
import './tool-confirmations.js';
import './tool-policy.js';
import './billing.js';
import './routines.js';
import './webhooks.js';
import './files.js';
import './resources.js';
import './skills.js';
import './channels.js';
import './environments.js';
import './vaults.js';
import './memory.js';
import './threads.js';

export const schema = builder.toSchema({ sortSchema: true });
