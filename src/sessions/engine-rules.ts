// What an engine accepts: current models of its catalog and its reasoningEffort values.
// Both are domain rules (422 invalid_spec), checked for agents and sessions alike.
import { AppError } from '../errors.js';
import { isCurrentModel, engineModels } from '../catalog/catalog.js';
import { EFFORTS_BY_TYPE, type AgentType } from '../agents/rules.js';

export function checkModelForEngine(agentType: string, llm: string): void {
  if (!isCurrentModel(agentType, llm)) {
    const options = engineModels(agentType)
      .map((m) => m.id)
      .join(', ');
    throw new AppError('invalid_spec', `llm "${llm}" is not a current model for agentType ${agentType}; choose one of: ${options}`);
  }
}

export function checkEffortForEngine(agentType: string, effort: string): void {
  const allowed = EFFORTS_BY_TYPE[agentType as AgentType] ?? [];
  if (!allowed.includes(effort)) {
    throw new AppError(
      'invalid_spec',
      allowed.length
        ? `reasoningEffort "${effort}" is not allowed for agentType ${agentType}; allowed: ${allowed.join(', ')}`
        : `agentType ${agentType} does not support reasoningEffort`,
    );
  }
}
