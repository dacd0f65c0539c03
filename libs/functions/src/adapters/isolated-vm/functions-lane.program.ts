/**
 * The program of the functions lane's processes (`function-runner.ts`): the isolates of function
 * versions (`isolated-vm.sandboxes.ts`) behind three tasks. Each process has its own egress guard with
 * the deployment's policy, resolving host names through the guard of the process that started the
 * lane, as the Actions lane's workers do: the policy is checked here, on the addresses connected to.
 */
import { EgressGuard, parseEgressPolicy, type ResolvedAddress } from '@tributary/destinations';
import type { LaneServices, LaneTasks } from '@tributary/lanes';
import type { EncodedInvocations, EncodedResult } from '../../function-lane.codec';
import type { CodeCheck, FunctionKind } from '../../function-runner.port';
import { IsolatedVmSandboxes, type SandboxLimits } from './isolated-vm.sandboxes';
import { SandboxFetcher } from './sandbox-fetch';

export interface FunctionsLaneProgramData {
  readonly limits: SandboxLimits;
  /** `TRIBUTARY_EGRESS` and `TRIBUTARY_EGRESS_ALLOW`, parsed again in the process. */
  readonly egress: { readonly mode: string; readonly allow: string };
}

/** The lane's service that resolves a host name with the starting process's resolver. */
export const RESOLVE_HOST_SERVICE = 'resolveHost';

export async function startLaneProgram(
  data: FunctionsLaneProgramData,
  services: LaneServices,
): Promise<LaneTasks> {
  const guard = new EgressGuard(parseEgressPolicy(data.egress.mode, data.egress.allow), (hostName) =>
    services.call<readonly ResolvedAddress[]>(RESOLVE_HOST_SERVICE, hostName),
  );
  const sandboxes = new IsolatedVmSandboxes(data.limits, new SandboxFetcher(guard, data.limits.timeoutMs));
  return {
    invokeAll: (batch: EncodedInvocations): Promise<EncodedResult[]> => sandboxes.invokeEncoded(batch),
    check: async (input: { kind: FunctionKind; code: string }): Promise<CodeCheck> =>
      sandboxes.check(input.kind, input.code),
    stats: async () => sandboxes.stats,
  };
}
