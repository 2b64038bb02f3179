// Agents: filled in by the agents domain.
