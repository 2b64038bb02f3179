// Placeholder until the Kubernetes driver lands.
import type { SandboxDriver } from '../sandbox/driver.js';
import type { EgressService } from '../egress/service.js';

export async function startKubernetesSandboxes(_opts: { egress: EgressService; egressPort: number }): Promise<{ driver: SandboxDriver; stop(): Promise<void> }> {
  throw new Error('the kubernetes sandbox driver is not available yet');
}
