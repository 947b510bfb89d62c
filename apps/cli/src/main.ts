import type { ConveneClientOptions } from '@convene/sdk';

// The terminal client arrives with its own issue; it will talk to the service only through the SDK.
const options: ConveneClientOptions = { baseUrl: process.env.CONVENE_URL ?? 'http://localhost:3000' };
console.log(`convene CLI: not yet implemented (would talk to ${options.baseUrl})`);
