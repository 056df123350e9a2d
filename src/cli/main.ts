#!/usr/bin/env node
// Entry point of the `sluice` binary: everything lives in cli.ts so tests can
// build the parser without running it.
import '../node.js'; // Node runtime: native CRC32C, every codec, Buffer bytes
import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli.js';

await buildCli(hideBin(process.argv)).parseAsync();
