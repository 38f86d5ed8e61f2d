#!/usr/bin/env node
import { runCli } from '../dist/adapters/cli/main.js';

await runCli(process.argv.slice(2));
