import { assetHandler, spacePageOf, staticPage } from '../routes/web';
import { dashboardPage, homePage, joinPage, linkPage, loginPage, spacePage } from '../web/pages';
import { type Declaration, route } from './declare';

/** The pages for humans (undocumented in /openapi.json: they are not API). */
export const webOperations: Declaration[] = [
  route('/', { GET: {}, handler: staticPage(homePage) }),
  route('/login', { GET: {}, handler: staticPage(loginPage) }),
  route('/link', { GET: {}, handler: staticPage(linkPage) }),
  route('/dashboard', { GET: {}, handler: staticPage(dashboardPage) }),
  route('/join/{spaceId}', { GET: {}, handler: spacePageOf(joinPage) }),
  route('/space/{spaceId}', { GET: {}, handler: spacePageOf(spacePage) }),
  route('/web/{file}', { GET: {}, handler: assetHandler }),
];
