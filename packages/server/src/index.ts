export { type AppRouter, buildOpenApiDocument } from './api';
export { buildApp } from './app';
export { loadConfig, type ServerConfig } from './env';
export { serve } from './serve';
export { type ConveneServer, createServer } from './server';
