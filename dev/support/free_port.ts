// freePort() for dev/, tests/ and bench/: the test kit's (src/testing/free_port.ts), which ships.

export { FREE_PORT_RANGE, freePort } from "../../src/testing/free_port.ts";
