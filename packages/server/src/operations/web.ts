import { assetHandler, homePage, loginPage, spacePageOf, staticPage } from '../routes/web';
import { type Declaration, route } from './declare';

/** The pages for humans, @convene/web's build (undocumented in /openapi.json: they are not API). */
export const webOperations: Declaration[] = [
  route('/', { GET: {}, handler: homePage }),
  route('/login', { GET: {}, handler: loginPage }),
  route('/link', { GET: {}, handler: staticPage('link') }),
  route('/dashboard', { GET: {}, handler: staticPage('dashboard') }),
  route('/join/{spaceId}', { GET: {}, handler: spacePageOf('join') }),
  route('/space/{spaceId}', { GET: {}, handler: spacePageOf('space') }),
  route('/web/{file}', { GET: {}, handler: assetHandler }),
];
