// The fault proxy for dev/, tests/ and bench/: the test kit's (src/testing/fault_proxy.ts), which ships.

export {
  type ConnectionRecord,
  FaultProxy,
  type FaultProxyOptions,
  type ProxyMode,
} from "../../src/testing/fault_proxy.ts";
