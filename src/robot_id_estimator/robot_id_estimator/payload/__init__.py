"""Payload identification, a use case: a rigid load on a frame of the arm.

- identify_payload: identify_payload_and_write (the use case); result: PayloadResult; report: payload.html
- samples, estimate, baseline, arm_error, principal_axes: the load's parameters and how well they are known
- load_frame, exports: the load in the frames and formats robots take it
"""
