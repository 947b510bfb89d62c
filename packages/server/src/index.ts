export { buildApp } from './app';
export { loadConfig, type ServerConfig } from './env';
export { buildOpenApiDocument } from './openapi';
export type { AppRouter } from './routers';
export { type ConveneServer, createServer } from './server';
