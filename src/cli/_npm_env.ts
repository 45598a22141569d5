// Side effect, imported first by main.ts: npm packages see a process.env limited to what --allow-env grants.

import process from "node:process";
import { installNpmEnvView } from "./permissions.ts";

installNpmEnvView(process);
