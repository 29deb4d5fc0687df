import { cosmetic } from "./cosmetic/entity.js";
import { formAnswer } from "./form/entity.js";
import { infectedStats } from "./infected/entity.js";
import { parkourMap } from "./parkour/entity.js";
import { player } from "./player/entity.js";
import { rewardLog } from "./reward-log/entity.js";
import { temporaryItem } from "./temporary-item/entity.js";
import { world } from "./world/entity.js";

/** Every entity of the API, in an order that satisfies foreign keys (players first). */
export const ENTITIES = [player, cosmetic, formAnswer, infectedStats, temporaryItem, rewardLog, world, parkourMap] as const;
