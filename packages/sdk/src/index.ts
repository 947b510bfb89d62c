/**
 * The Convene SDK. Its client lands with its own issue; until then this package only names the
 * base URL a client talks to, so that the workspace wiring (cli -> sdk) exists from the start.
 */
export interface ConveneClientOptions {
  baseUrl: string;
}
