"""DynamoDB adapters for the storage ports: the only place botocore is used for state (on first call).

Import this package only in deployments that use DynamoDB; nothing else in the kit imports it.
"""

from .calls import DynamoDBCallStore
from .changes import DynamoDBChangeLog
from .events import DynamoDBEventLog
from .sessions import DynamoDBSessionStore
from .table import TABLE_DEFINITION, create_table
from .task_store import DynamoDBTaskStore

__all__ = [
    "TABLE_DEFINITION",
    "DynamoDBCallStore",
    "DynamoDBChangeLog",
    "DynamoDBEventLog",
    "DynamoDBSessionStore",
    "DynamoDBTaskStore",
    "create_table",
]
