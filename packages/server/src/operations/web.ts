import { assetHandler, homePage, loginPage, spacePageOf, staticPage } from '../routes/web';
import { type Declaration, route } from './declare';

/**
 * The pages for humans, @convene/web's build (undocumented in /openapi.json: they are not API),
 * counted in the pages' own budget per address, not the API's rate limit.
 */
export const webOperations: Declaration[] = [
  route('/', { GET: {}, handler: homePage, page: true }),
  route('/login', { GET: {}, handler: loginPage, page: true }),
  route('/link', { GET: {}, handler: staticPage('link'), page: true }),
  route('/dashboard', { GET: {}, handler: staticPage('dashboard'), page: true }),
  route('/join/{spaceId}', { GET: {}, handler: spacePageOf('join'), page: true }),
  route('/space/{spaceId}', { GET: {}, handler: spacePageOf('space'), page: true }),
  route('/web/{file}', { GET: {}, handler: assetHandler, page: true }),
];
