/**
 * {@code loopcsi evacuate --node X}: moves every claimed volume of the pools off node X (issue 35,
 * part 3). The plan is a pure function of what the API server holds ({@link PlanBuilder}); carrying
 * it out ({@link Evacuation}) acts as the pool's controller for each volume (a cross-node clone
 * through controller.ApiVolumeProvider, the LoopTransfer written before the LoopVolume intent) and
 * as csi-provisioner for the new PersistentVolume ({@link NewObjects}). Progress is recorded on the
 * old PersistentVolume ({@link MoveRecord}), so a run that stopped is continued by the next one.
 * docs/operations.md says how to use it.
 */
package io.loopcsi.cli.evacuate;
