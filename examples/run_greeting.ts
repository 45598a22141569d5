// Runs the hub CLI (every flag of `deno task run`) with the example Greeting operator beside the built-in ones.
//
//   kubectl apply -f examples/greeting_crd.yaml        # in each cluster
//   deno run -A examples/run_greeting.ts --kubeconfig clusters/local.yaml --clusters all \
//     --liveness http://127.0.0.1:8080/healthz
//
// `--operators none` leaves the Greeting operator alone. A user's own project does the same with
// `import { main } from "@operator-hub/hub/cli"`.

import { main } from "../cli.ts";
import { greetingOperator } from "./greeting_operator.ts";

Deno.exit(await main(Deno.args, { operators: [greetingOperator] }));
